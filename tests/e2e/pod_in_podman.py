"""A rendered pod spec run with podman the way a kubelet runs it, for the parts the chart uses.

Why: `helm template` output is only proven by running it. There is no cluster here, but a pod is
init containers run to completion and then the main container, each with its securityContext and
its volumes. This maps those to podman flags: runAsUser/runAsGroup to --user, fsGroup and
supplementalGroups to --group-add, readOnlyRootFilesystem to --read-only, capabilities to
--cap-drop/--cap-add, allowPrivilegeEscalation: false to no-new-privileges; a configMap volume to
files written from the rendered ConfigMap, a hostPath to a bind mount, an emptyDir to a tmpfs. Any
other volume type fails loudly, so a chart change that needs more is noticed here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.podman_cli import Podman


def _config_maps(objects: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    return {obj["metadata"]["name"]: obj.get("data", {}) for obj in objects if obj["kind"] == "ConfigMap"}


def _volume_flags(
    container: dict[str, Any], pod: dict[str, Any], objects: list[dict[str, Any]], scratch: Path
) -> list[str]:
    volumes = {volume["name"]: volume for volume in pod.get("volumes", [])}
    maps = _config_maps(objects)
    flags: list[str] = []
    for mount in container.get("volumeMounts", []):
        volume = volumes[mount["name"]]
        read_only = mount.get("readOnly") is True
        if "configMap" in volume:
            data = maps[volume["configMap"]["name"]]
            folder = scratch / "configmaps" / mount["name"]
            folder.mkdir(parents=True, exist_ok=True)
            for key, text in data.items():
                (folder / key).write_text(text)
                (folder / key).chmod(0o644)
            source = folder / mount["subPath"] if "subPath" in mount else folder
            flags += ["--volume", f"{source}:{mount['mountPath']}:ro"]
        elif "hostPath" in volume:
            path = Path(volume["hostPath"]["path"])
            if volume["hostPath"].get("type") == "DirectoryOrCreate":
                path.mkdir(parents=True, exist_ok=True)  # root-owned, 0755, as the kubelet makes it
            flags += ["--volume", f"{path}:{mount['mountPath']}{':ro' if read_only else ''}"]
        elif "emptyDir" in volume:
            flags += ["--tmpfs", f"{mount['mountPath']}:rw,mode=1777"]
        else:
            raise AssertionError(f"volume {mount['name']}: {sorted(volume)} is not mapped to podman")
    return flags


def _security_flags(container: dict[str, Any], pod: dict[str, Any]) -> list[str]:
    pod_security = pod.get("securityContext", {})
    security = {**pod_security, **container.get("securityContext", {})}
    flags = ["--user", f"{security.get('runAsUser', 0)}:{security.get('runAsGroup', 0)}"]
    for group in [pod_security.get("fsGroup"), *pod_security.get("supplementalGroups", [])]:
        if group is not None:
            flags += ["--group-add", str(group)]
    if security.get("readOnlyRootFilesystem"):
        flags.append("--read-only")
    capabilities = security.get("capabilities", {})
    flags += [arg for cap in capabilities.get("drop", []) for arg in ("--cap-drop", cap)]
    flags += [arg for cap in capabilities.get("add", []) for arg in ("--cap-add", cap)]
    if security.get("allowPrivilegeEscalation") is False:
        flags += ["--security-opt", "no-new-privileges"]
    return flags


def _env_flags(container: dict[str, Any]) -> list[str]:
    assert not container.get("envFrom"), "envFrom is not mapped to podman"
    return [arg for item in container.get("env", []) for arg in ("--env", f"{item['name']}={item['value']}")]


def container_flags(
    container: dict[str, Any], pod: dict[str, Any], objects: list[dict[str, Any]], scratch: Path
) -> list[str]:
    """podman run flags for one container of `pod` (its command becomes --entrypoint)."""
    flags = [
        "--network",
        "host",
        *_security_flags(container, pod),
        *_env_flags(container),
        *_volume_flags(container, pod, objects, scratch),
    ]
    command = container.get("command")
    if command:
        flags += ["--entrypoint", command[0]]
    return flags


def container_args(container: dict[str, Any]) -> list[str]:
    """What follows the image on the podman command line: the rest of command, then args."""
    command = container.get("command") or []
    return [*command[1:], *container.get("args", [])]


def run_init_containers(
    podman: Podman, image: str, pod: dict[str, Any], objects: list[dict[str, Any]], scratch: Path
) -> None:
    """Each init container in order, to completion; a failing one fails the test, as it stops a pod."""
    for init in pod.get("initContainers", []):
        podman.run(
            "run", "--rm", *container_flags(init, pod, objects, scratch), image, *container_args(init)
        )  # fmt: skip


def start_container(
    podman: Podman,
    image: str,
    name: str,
    container: dict[str, Any],
    pod: dict[str, Any],
    objects: list[dict[str, Any]],
    scratch: Path,
) -> None:
    """The pod's main container, detached, under `name`."""
    flags = container_flags(container, pod, objects, scratch)
    podman.run("run", "--detach", "--name", name, *flags, image, *container_args(container))
