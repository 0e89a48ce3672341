"""Relax's windowed zlib compression ratio (`compression`): the detector, its window scan, upstream's API.

- `detector.py`: parameters (config section `detectors.compression`) and the batch/incremental forms;
- `_window_scan.py`: window geometry, the zlib ratio, the report (shared by both forms);
- `upstream.py`: Relax's and slime's own functions, for parity (seed vectors) and porting.
"""

from __future__ import annotations

from .detector import Compression, CompressionParams, detect_compression

__all__ = ["Compression", "CompressionParams", "detect_compression"]
