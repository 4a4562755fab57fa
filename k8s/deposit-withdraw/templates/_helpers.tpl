{{/*
Names and labels, after `helm create`'s scaffold. Selector labels never carry the version, so an
upgrade never tries to change a Deployment's immutable selector.
*/}}

{{/* The chart name, or nameOverride. */}}
{{- define "dw.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The fully qualified app name: fullnameOverride, else <release>-<chart> (just <release> when it
already contains the chart name). Truncated to 63 characters, the DNS label limit.
*/}}
{{- define "dw.fullname" -}}
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

{{/* Chart name and version, for the helm.sh/chart label. */}}
{{- define "dw.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every resource. */}}
{{- define "dw.labels" -}}
helm.sh/chart: {{ include "dw.chart" . }}
{{ include "dw.selectorLabels" . }}
{{- if .Chart.AppVersion }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: {{ include "dw.name" . }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Selector labels (no version). */}}
{{- define "dw.selectorLabels" -}}
app.kubernetes.io/name: {{ include "dw.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Per-component helpers take a dict: (dict "root" $ "key" "apiGateway"), where key is the
component's block in values.yaml.
*/}}

{{/* The component's process name, as in the repository: apiGateway -> api-gateway. */}}
{{- define "dw.componentName" -}}
{{- $names := dict "apiGateway" "api-gateway" "transactionsSvc" "transactions-svc" "callbackSvc" "callback-svc" "ui" "ui" "migration" "migrate" }}
{{- required (printf "unknown component %q" .key) (get $names .key) }}
{{- end }}

{{/* <fullname>-<component>, the name of the component's Deployment, Service and friends. */}}
{{- define "dw.componentFullname" -}}
{{- printf "%s-%s" (include "dw.fullname" .root) (include "dw.componentName" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "dw.componentLabels" -}}
{{ include "dw.labels" .root }}
app.kubernetes.io/component: {{ include "dw.componentName" . }}
{{- end }}

{{- define "dw.componentSelectorLabels" -}}
{{ include "dw.selectorLabels" .root }}
app.kubernetes.io/component: {{ include "dw.componentName" . }}
{{- end }}

{{/* The ServiceAccount the service pods run as. */}}
{{- define "dw.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "dw.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Secret holding DATABASE_URL, AMQP_URL and ADMIN_TOKEN: the user's, or the chart's. */}}
{{- define "dw.secretName" -}}
{{- default (include "dw.fullname" .) .Values.secrets.existingSecret }}
{{- end }}

{{- define "dw.configMapName" -}}
{{- include "dw.fullname" . }}
{{- end }}

{{- define "dw.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* TRUST_PROXY_HOPS: as set, or 1 behind the chart's Ingress (the controller is one proxy), else 0. */}}
{{- define "dw.trustProxyHops" -}}
{{- if kindIs "invalid" .Values.config.trustProxyHops }}{{ ternary 1 0 .Values.ingress.enabled }}{{ else }}{{ .Values.config.trustProxyHops | int64 }}{{ end }}
{{- end }}

{{/* REDIS_URL: the given one, or the in-release Redis Service. */}}
{{- define "dw.redisUrl" -}}
{{- .Values.redis.url | default (printf "redis://%s-redis:6379" (include "dw.fullname" .)) }}
{{- end }}

{{/* In-cluster base URL of a component's Service, e.g. for TRANSACTIONS_URL. */}}
{{- define "dw.componentUrl" -}}
{{- $c := index .root.Values .key }}
{{- printf "http://%s:%v" (include "dw.componentFullname" .) $c.service.port }}
{{- end }}

{{/*
terminationGracePeriodSeconds: the preStop sleep, then up to SHUTDOWN_TIMEOUT_MS of graceful
shutdown (rounded up to whole seconds), plus a margin, so Kubernetes never SIGKILLs a pod that is
still finishing its work within its own timeout.
*/}}
{{- define "dw.terminationGracePeriodSeconds" -}}
{{- $shutdownSeconds := div (add (int .Values.config.shutdownTimeoutMs) 999) 1000 }}
{{- add (int .Values.preStopSleepSeconds) $shutdownSeconds (int .Values.terminationGraceExtraSeconds) }}
{{- end }}

{{/* Fails the render early when credentials are neither given nor referenced. */}}
{{- define "dw.validateSecrets" -}}
{{- if not .Values.secrets.existingSecret }}
{{- $_ := required "secrets.databaseUrl is required (or set secrets.existingSecret)" .Values.secrets.databaseUrl }}
{{- $_ = required "secrets.amqpUrl is required (or set secrets.existingSecret)" .Values.secrets.amqpUrl }}
{{- $_ = required "secrets.adminToken is required (or set secrets.existingSecret)" .Values.secrets.adminToken }}
{{- $_ = required "secrets.internalAuthSecrets is required (or set secrets.existingSecret): e.g. openssl rand -base64 32" .Values.secrets.internalAuthSecrets }}
{{- end }}
{{- end }}

{{/*
A Kubernetes memory quantity in whole bytes, for the alert rules: a decimal number ("1.5", ".5",
"268435456", or a YAML number) with an optional binary (Ki, Mi, Gi, Ti, Pi, Ei) or decimal (k, M,
G, T, P, E) suffix, e.g. "384Mi" or "1.5Gi". Anything else (an exponent, millibytes, a typo such as
"lots"), and zero, fails the render rather than dividing by a wrong figure. Takes
(dict "value" <quantity> "name" <values path, for the message>).
*/}}
{{- define "dw.memoryBytes" -}}
{{- $q := .value | toString | trim -}}
{{- if kindIs "float64" .value }}{{ $q = printf "%f" .value }}{{ end -}}
{{- if not (regexMatch "^([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$" $q) -}}
{{- fail (printf "%s: %q is not a memory quantity the chart can read; write a number of bytes, or one with a suffix Ki, Mi, Gi, Ti or k, M, G, T, e.g. 384Mi or 1.5Gi" .name $q) -}}
{{- end -}}
{{- $number := regexFind "^[0-9.]+" $q -}}
{{- $suffix := trimPrefix $number $q -}}
{{- $factors := dict "" 1.0 "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 "Pi" 1125899906842624.0 "Ei" 1152921504606846976.0 "k" 1e3 "M" 1e6 "G" 1e9 "T" 1e12 "P" 1e15 "E" 1e18 -}}
{{- $bytes := mulf (float64 $number) (get $factors $suffix) | ceil -}}
{{- if le $bytes 0.0 -}}
{{- fail (printf "%s: %q is no memory at all; give a limit above 0 or none" .name $q) -}}
{{- end -}}
{{- printf "%.0f" $bytes -}}
{{- end -}}

{{/* nodeOptions' V8 old-generation bound in MiB (--max-old-space-size=N, or its _ spelling), or "". */}}
{{- define "dw.heapBoundMiB" -}}
{{- regexFind "[0-9]+$" (regexFind "--max[-_]old[-_]space[-_]size=[0-9]+" (toString .Values.nodeOptions)) }}
{{- end }}

{{/*
Fails the render on values the schema cannot relate to each other but that would break the pods:
a metrics port that is also a service's own port (EADDRINUSE at start), an autoscaler whose
minimum is above its maximum, and a V8 heap bound that does not fit in a component's memory limit.
*/}}
{{- define "dw.validateValues" -}}
{{- $root := . }}
{{- $heapMiB := include "dw.heapBoundMiB" . }}
{{- range $key := list "apiGateway" "transactionsSvc" "callbackSvc" "ui" }}
{{- $c := index $root.Values $key }}
{{- if eq (int $root.Values.metrics.port) (int $c.containerPort) }}
{{- fail (printf "metrics.port %v is also %s.containerPort: the service and its metrics listener cannot share a port (EADDRINUSE at start); give metrics.port a port of its own" $root.Values.metrics.port $key) }}
{{- end }}
{{- if and $c.autoscaling $c.autoscaling.enabled (gt (int $c.autoscaling.minReplicas) (int $c.autoscaling.maxReplicas)) }}
{{- fail (printf "%s.autoscaling.minReplicas (%v) is above %s.autoscaling.maxReplicas (%v)" $key $c.autoscaling.minReplicas $key $c.autoscaling.maxReplicas) }}
{{- end }}
{{- $limit := dig "resources" "limits" "memory" "" $c }}
{{- if and $heapMiB (ne (toString $limit) "") }}
{{- $limitBytes := include "dw.memoryBytes" (dict "value" $limit "name" (printf "%s.resources.limits.memory" $key)) | float64 }}
{{- if ge (mulf (float64 $heapMiB) 1048576.0) $limitBytes }}
{{- fail (printf "nodeOptions' --max-old-space-size=%s (MiB) does not fit in %s.resources.limits.memory (%v): the container would be OOMKilled before V8 reaches its bound; keep the bound well below the limit (the process needs memory beyond its heap), or raise the limit" $heapMiB $key $limit) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
config.amqpPrefix as a regular expression inside a PromQL string, so the queue alerts select this
release's queues (<prefix>callbacks.deliver …) and no other's.
*/}}
{{- define "dw.alertQueuePrefix" -}}
{{- regexQuoteMeta .Values.config.amqpPrefix | replace "\\" "\\\\" }}
{{- end }}
