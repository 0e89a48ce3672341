{{/* The pod template shared by daemonset.yaml and deployment.yaml (the `kind:` switch). */}}
{{- define "degeneration-exporter.podTemplate" -}}
metadata:
  labels:
    {{- include "degeneration-exporter.selectorLabels" . | nindent 4 }}
    {{- with .Values.commonLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
    {{- with .Values.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- $annotations := deepCopy (.Values.podAnnotations | default dict) }}
  {{- if not .Values.existingConfigMap }}
  {{- /* a config change rolls the pods: the config is mounted with subPath, which never updates */}}
  {{- $_ := set $annotations "checksum/config" (include (print $.Template.BasePath "/configmap.yaml") . | sha256sum) }}
  {{- end }}
  {{- with $annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  serviceAccountName: {{ include "degeneration-exporter.serviceAccountName" . }}
  automountServiceAccountToken: {{ .Values.serviceAccount.automountServiceAccountToken }}
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.priorityClassName }}
  priorityClassName: {{ . }}
  {{- end }}
  terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}
  {{- with .Values.securityContext }}
  securityContext:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- if and (eq .Values.kind "DaemonSet") .Values.positions.hostPath.chown }}
  initContainers:
    # hostPath volumes ignore fsGroup: make the positions directory writable by the daemon's user.
    # python3: the image's own interpreter (the Containerfile's venv is first on PATH); a slim base need
    # not have chown. tests/e2e/test_container.py runs this command in the built image.
    - name: chown-positions
      image: {{ include "degeneration-exporter.image" . }}
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      command:
        - python3
        - -c
        - import os, sys; os.chown(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
        - {{ .Values.positions.mountPath | quote }}
        - {{ .Values.securityContext.runAsUser | default 0 | quote }}
        - {{ .Values.securityContext.runAsGroup | default 0 | quote }}
      securityContext:
        runAsNonRoot: false
        runAsUser: 0
        runAsGroup: 0
        allowPrivilegeEscalation: false
        readOnlyRootFilesystem: true
        capabilities:
          drop: [ALL]
          add: [CHOWN]
      volumeMounts:
        - name: positions
          mountPath: {{ .Values.positions.mountPath }}
  {{- end }}
  containers:
    - name: degeneration-exporter
      image: {{ include "degeneration-exporter.image" . }}
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      command: [degeneration-exporter]
      args:
        - run
        - --config
        - /etc/degeneration-exporter/config.yaml
        {{- with .Values.extraArgs }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      ports:
        - name: metrics
          containerPort: {{ include "degeneration-exporter.metricsPort" . }}
          protocol: TCP
      {{- with .Values.extraEnv }}
      env:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.extraEnvFrom }}
      envFrom:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.livenessProbe }}
      livenessProbe:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.readinessProbe }}
      readinessProbe:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.resources }}
      resources:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.containerSecurityContext }}
      securityContext:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      volumeMounts:
        - name: config
          mountPath: /etc/degeneration-exporter/config.yaml
          subPath: config.yaml
          readOnly: true
        - name: positions
          mountPath: {{ .Values.positions.mountPath }}
        - name: tmp
          mountPath: /tmp
        {{- range .Values.hostPathMounts }}
        - name: {{ .name }}
          mountPath: {{ default .hostPath .mountPath }}
          readOnly: {{ ne .readOnly false }}
        {{- end }}
        {{- range .Values.claimMounts }}
        - name: {{ .name }}
          mountPath: {{ .mountPath }}
          {{- with .subPath }}
          subPath: {{ . }}
          {{- end }}
          readOnly: true
        {{- end }}
        {{- with .Values.extraVolumeMounts }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
  volumes:
    - name: config
      configMap:
        name: {{ include "degeneration-exporter.configMapName" . }}
    - name: positions
      {{- include "degeneration-exporter.positionsVolume" . | trim | nindent 6 }}
    - name: tmp
      emptyDir:
        sizeLimit: 64Mi
    {{- range .Values.hostPathMounts }}
    - name: {{ .name }}
      hostPath:
        path: {{ .hostPath }}
        {{- with .type }}
        type: {{ . }}
        {{- end }}
    {{- end }}
    {{- range .Values.claimMounts }}
    - name: {{ .name }}
      persistentVolumeClaim:
        claimName: {{ .claimName }}
        readOnly: true
    {{- end }}
    {{- with .Values.extraVolumes }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with .Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
