{{/*
The chart's name, truncated to 63 characters because some Kubernetes name fields are limited to
this (by the DNS naming spec).
*/}}
{{- define "compile-lens.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The release's full name: the release name, then the chart name unless the release name already
contains it. Truncated to 63 characters, less the "-headless" suffix the headless Service adds.
*/}}
{{- define "compile-lens.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 54 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 54 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 54 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "compile-lens.headlessName" -}}
{{- printf "%s-headless" (include "compile-lens.fullname" .) }}
{{- end }}

{{- define "compile-lens.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "compile-lens.labels" -}}
helm.sh/chart: {{ include "compile-lens.chart" . }}
{{ include "compile-lens.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/component: server
app.kubernetes.io/part-of: compile-lens
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "compile-lens.selectorLabels" -}}
app.kubernetes.io/name: {{ include "compile-lens.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "compile-lens.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "compile-lens.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "compile-lens.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/*
Where the Secrets are mounted, and the Secret that holds the client CA.
*/}}
{{- define "compile-lens.tlsDir" -}}/etc/compile-lens/tls{{- end }}
{{- define "compile-lens.clientCADir" -}}/etc/compile-lens/client-ca{{- end }}
{{- define "compile-lens.tokenDir" -}}/etc/compile-lens/token{{- end }}
{{- define "compile-lens.correctnessDbDir" -}}/etc/compile-lens/correctness-db{{- end }}
{{- define "compile-lens.clientCASecret" -}}
{{- .Values.tls.clientCA.secretName | default .Values.tls.secretName }}
{{- end }}

{{/*
terminationGracePeriodSeconds: longer than the drain (drain_delay + drain_grace), by 10 s unless
set; a value that is not longer fails the render.
*/}}
{{- define "compile-lens.terminationGracePeriodSeconds" -}}
{{- $drain := add .Values.server.drainDelaySeconds .Values.server.drainGraceSeconds }}
{{- if kindIs "invalid" .Values.terminationGracePeriodSeconds }}
{{- add $drain 10 }}
{{- else if le (int .Values.terminationGracePeriodSeconds) (int $drain) }}
{{- fail (printf "terminationGracePeriodSeconds (%v) must be longer than server.drainDelaySeconds + server.drainGraceSeconds (%v), or the kubelet kills cl-server while it drains" .Values.terminationGracePeriodSeconds $drain) }}
{{- else }}
{{- .Values.terminationGracePeriodSeconds }}
{{- end }}
{{- end }}

{{/*
`cl-client health` against this pod over TLS: the exec probe when the kubelet's gRPC probe cannot
be used (it does not speak TLS).
*/}}
{{- define "compile-lens.execHealthCommand" -}}
- /usr/local/bin/cl-client
- health
- --server=localhost:{{ .Values.server.grpcPort }}
- --tls_ca={{ include "compile-lens.tlsDir" . }}/ca.crt
{{- if .Values.tls.clientCA.enabled }}
- --tls_cert={{ include "compile-lens.tlsDir" . }}/tls.crt
- --tls_key={{ include "compile-lens.tlsDir" . }}/tls.key
{{- end }}
{{- end }}

{{/*
A probe: the native gRPC action on the numeric port (the kubelet's gRPC probe takes no port name),
or, with TLS, the exec action above. $probe is .Values.probes.readiness or .liveness.
*/}}
{{- define "compile-lens.probe" -}}
{{- $root := index . 0 }}
{{- $probe := index . 1 }}
{{- if $root.Values.tls.enabled }}
exec:
  command:
    {{- include "compile-lens.execHealthCommand" $root | nindent 4 }}
{{- else }}
grpc:
  port: {{ $root.Values.server.grpcPort }}
  {{- with $probe.service }}
  service: {{ . }}
  {{- end }}
{{- end }}
{{- range $k, $v := omit $probe "service" }}
{{ $k }}: {{ $v }}
{{- end }}
{{- end }}
