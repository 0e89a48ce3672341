{{/* Endpoint fields shared by servicemonitor.yaml and podmonitor.yaml; call with (dict "m" .Values.<section>). */}}
{{- define "degeneration-exporter.scrapeEndpoint" -}}
{{- $m := .m -}}
path: /metrics
{{- with $m.interval }}
interval: {{ . }}
{{- end }}
{{- with $m.scrapeTimeout }}
scrapeTimeout: {{ . }}
{{- end }}
{{- with $m.scheme }}
scheme: {{ . }}
{{- end }}
{{- with $m.tlsConfig }}
tlsConfig:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- if $m.honorLabels }}
honorLabels: true
{{- end }}
{{- with $m.relabelings }}
relabelings:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $m.metricRelabelings }}
metricRelabelings:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* Metadata shared by the prometheus-operator objects; call with (dict "ctx" $ "m" .Values.<section>). */}}
{{- define "degeneration-exporter.operatorMetadata" -}}
name: {{ include "degeneration-exporter.fullname" .ctx }}
namespace: {{ default (include "degeneration-exporter.namespace" .ctx) .m.namespace }}
labels:
  {{- include "degeneration-exporter.labels" .ctx | nindent 2 }}
  {{- with .m.additionalLabels }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- with .m.annotations }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
