{{/* Names, labels and the few values derived from others (the metrics port from config). */}}

{{- define "degeneration-exporter.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "degeneration-exporter.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "degeneration-exporter.namespace" -}}
{{- default .Release.Namespace .Values.namespaceOverride }}
{{- end }}

{{- define "degeneration-exporter.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "degeneration-exporter.selectorLabels" -}}
app.kubernetes.io/name: {{ include "degeneration-exporter.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "degeneration-exporter.labels" -}}
helm.sh/chart: {{ include "degeneration-exporter.chart" . }}
{{ include "degeneration-exporter.selectorLabels" . }}
app.kubernetes.io/version: {{ include "degeneration-exporter.imageTag" . | trunc 63 | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: metrics
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "degeneration-exporter.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "degeneration-exporter.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "degeneration-exporter.imageTag" -}}
{{- default .Chart.AppVersion .Values.image.tag }}
{{- end }}

{{- define "degeneration-exporter.image" -}}
{{- $repo := .Values.image.repository }}
{{- if .Values.image.registry }}{{ $repo = printf "%s/%s" .Values.image.registry $repo }}{{ end }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" $repo .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" $repo (include "degeneration-exporter.imageTag" .) }}
{{- end }}
{{- end }}

{{/* The ConfigMap holding config.yaml: the user's, or the one rendered from .Values.config. */}}
{{- define "degeneration-exporter.configMapName" -}}
{{- default (include "degeneration-exporter.fullname" .) .Values.existingConfigMap }}
{{- end }}

{{/* Port of config.sinks.prometheus.listen ("host:port", "[::]:port"); 10142 (sinks/prometheus.py DEFAULT_PORT) when unset. */}}
{{- define "degeneration-exporter.metricsPort" -}}
{{- $listen := dig "sinks" "prometheus" "listen" "" (.Values.config | default dict) }}
{{- if $listen }}
{{- $port := splitList ":" (toString $listen) | last }}
{{- if not (regexMatch "^[0-9]+$" $port) }}
{{- fail (printf "config.sinks.prometheus.listen must be host:port, got %q" (toString $listen)) }}
{{- end }}
{{- $port | int }}
{{- else }}
{{- 10142 }}
{{- end }}
{{- end }}

{{/* Positions volume source: hostPath (DaemonSet), or PVC / emptyDir (Deployment). */}}
{{- define "degeneration-exporter.positionsVolume" -}}
{{- if eq .Values.kind "DaemonSet" }}
hostPath:
  path: {{ .Values.positions.hostPath.path }}
  type: DirectoryOrCreate
{{- else if .Values.positions.persistence.enabled }}
persistentVolumeClaim:
  claimName: {{ default (printf "%s-positions" (include "degeneration-exporter.fullname" .)) .Values.positions.persistence.existingClaim }}
{{- else }}
emptyDir: {}
{{- end }}
{{- end }}

{{/* Fails on values that would render a broken release rather than a broken pod. */}}
{{- define "degeneration-exporter.validate" -}}
{{- if not (has .Values.kind (list "DaemonSet" "Deployment")) }}
{{- fail (printf "kind must be DaemonSet or Deployment, got %q" .Values.kind) }}
{{- end }}
{{- if not .Values.existingConfigMap }}
{{- $dir := dig "state" "directory" "" (.Values.config | default dict) }}
{{- if and $dir (ne (toString $dir) .Values.positions.mountPath) }}
{{- fail (printf "config.state.directory (%s) must equal positions.mountPath (%s): positions are written there" $dir .Values.positions.mountPath) }}
{{- end }}
{{- end }}
{{- if and .Values.serviceMonitor.enabled (not .Values.service.enabled) }}
{{- fail "serviceMonitor.enabled needs service.enabled (or use podMonitor)" }}
{{- end }}
{{- end }}
