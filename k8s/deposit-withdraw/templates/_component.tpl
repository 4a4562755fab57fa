{{/*
One Deployment, Service, HPA and PDB per component, from the same templates: the four services run
the same image and differ only in their folder, port, credentials and scaling. Each takes
(dict "root" $ "key" "<values block>").
*/}}

{{/*
Which credentials each component reads from the Secret (least privilege): INTERNAL_AUTH_SECRETS
only where requests are signed or verified (gateway, transactions-svc, ui), REDIS_URL only in the
gateway and only when it is the user's own (redis.url); the in-release Redis has no password, so its
address is a plain variable (dw.deployment) and an existingSecret need not hold it.
*/}}
{{- define "dw.componentSecretKeys" -}}
{{- $gateway := list "AMQP_URL" "INTERNAL_AUTH_SECRETS" }}
{{- if and .root.Values.redis.enabled .root.Values.redis.url }}{{- $gateway = append $gateway "REDIS_URL" }}{{- end }}
{{- $keys := dict "apiGateway" $gateway "transactionsSvc" (list "DATABASE_URL" "AMQP_URL" "ADMIN_TOKEN" "INTERNAL_AUTH_SECRETS") "callbackSvc" (list "DATABASE_URL" "AMQP_URL") "ui" (list "INTERNAL_AUTH_SECRETS") }}
{{- toJson (get $keys .key) }}
{{- end }}

{{- define "dw.deployment" -}}
{{- $root := .root }}
{{- $c := index $root.Values .key }}
{{- $name := include "dw.componentName" . }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "dw.componentFullname" . }}
  labels:
    {{- include "dw.componentLabels" . | nindent 4 }}
spec:
  {{- if not (and $c.autoscaling $c.autoscaling.enabled) }}
  replicas: {{ $c.replicaCount }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "dw.componentSelectorLabels" . | nindent 6 }}
  template:
    metadata:
      annotations:
        # Roll the pods when their configuration changes.
        checksum/config: {{ include (print $root.Template.BasePath "/configmap.yaml") $root | sha256sum }}
        {{- if not $root.Values.secrets.existingSecret }}
        checksum/secret: {{ include (print $root.Template.BasePath "/secret.yaml") $root | sha256sum }}
        {{- else }}
        # The existing Secret as the cluster holds it at install/upgrade time (empty under helm
        # template), so `helm upgrade` after editing it rolls the pods.
        checksum/secret: {{ (lookup "v1" "Secret" $root.Release.Namespace $root.Values.secrets.existingSecret).data | toJson | sha256sum }}
        {{- end }}
        {{- if $root.Values.metrics.scrapeAnnotations }}
        prometheus.io/scrape: "true"
        prometheus.io/port: {{ $root.Values.metrics.port | quote }}
        prometheus.io/path: /metrics
        {{- end }}
        {{- with $root.Values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      labels:
        {{- include "dw.componentLabels" . | nindent 8 }}
        {{- with $root.Values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "dw.serviceAccountName" $root }}
      automountServiceAccountToken: {{ $root.Values.serviceAccount.automountServiceAccountToken }}
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      terminationGracePeriodSeconds: {{ include "dw.terminationGracePeriodSeconds" $root }}
      containers:
        - name: {{ $name }}
          image: {{ include "dw.image" $root | quote }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          workingDir: /app/apps/{{ $name }}
          command: ["node", "--enable-source-maps", "--require", "./dist/instrumentation.js", "dist/main.js"]
          securityContext:
            {{- toYaml $root.Values.containerSecurityContext | nindent 12 }}
          ports:
            - name: http
              containerPort: {{ $c.containerPort }}
              protocol: TCP
            # Serves only GET /metrics: the one port monitoring may reach (networkpolicy.yaml).
            - name: metrics
              containerPort: {{ $root.Values.metrics.port }}
              protocol: TCP
          envFrom:
            - configMapRef:
                name: {{ include "dw.configMapName" $root }}
            {{- with $root.Values.extraEnvFrom }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          env:
            - name: OTEL_SERVICE_NAME
              value: {{ $name | quote }}
            - name: NODE_OPTIONS
              value: {{ $root.Values.nodeOptions | quote }}
            {{- if and (eq .key "apiGateway") $root.Values.redis.enabled (not $root.Values.redis.url) }}
            - name: REDIS_URL
              value: {{ include "dw.redisUrl" $root | quote }}
            {{- end }}
            {{- range (include "dw.componentSecretKeys" . | fromJsonArray) }}
            - name: {{ . }}
              valueFrom:
                secretKeyRef:
                  name: {{ include "dw.secretName" $root }}
                  key: {{ . }}
            {{- end }}
            {{- range $key, $value := $c.extraEnv }}
            - name: {{ $key }}
              value: {{ $value | toString | quote }}
            {{- end }}
          livenessProbe:
            httpGet:
              path: /healthz
              port: http
            {{- toYaml $root.Values.probes.liveness | nindent 12 }}
          readinessProbe:
            httpGet:
              path: /readyz
              port: http
            {{- toYaml $root.Values.probes.readiness | nindent 12 }}
          startupProbe:
            httpGet:
              path: /healthz
              port: http
            {{- toYaml $root.Values.probes.startup | nindent 12 }}
          {{- if gt (int $root.Values.preStopSleepSeconds) 0 }}
          lifecycle:
            preStop:
              exec:
                # Keep serving while endpoints and load balancers stop sending new requests; the
                # service's own SIGTERM handling then drains what is in flight.
                command: ["sleep", {{ $root.Values.preStopSleepSeconds | quote }}]
          {{- end }}
          resources:
            {{- toYaml $c.resources | nindent 12 }}
          volumeMounts:
            # The root filesystem is read-only; Node and its libraries may still want a /tmp.
            - name: tmp
              mountPath: /tmp
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: 64Mi
      {{- with $root.Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $root.Values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $root.Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end }}

{{- define "dw.service" -}}
{{- $c := index .root.Values .key }}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "dw.componentFullname" . }}
  labels:
    {{- include "dw.componentLabels" . | nindent 4 }}
spec:
  type: {{ $c.service.type }}
  ports:
    - name: http
      port: {{ $c.service.port }}
      targetPort: http
      protocol: TCP
  selector:
    {{- include "dw.componentSelectorLabels" . | nindent 4 }}
{{- end }}

{{/*
The Service the component's ServiceMonitor scrapes (templates/monitoring.yaml), with the serviceMonitors:
always ClusterIP and only the metrics port, so that the main Service (a LoadBalancer, for the
gateway) never publishes /metrics. Its dw.metricsJobLabel label names the Prometheus job
(<fullname>-<component>, as the alerts and dashboards expect).
*/}}
{{- define "dw.metricsServiceName" -}}
{{- printf "%s-metrics" (include "dw.componentFullname" . | trunc 55 | trimSuffix "-") }}
{{- end }}

{{- define "dw.metricsJobLabel" -}}
deposit-withdraw/metrics-job
{{- end }}

{{- define "dw.metricsService" -}}
{{- if .root.Values.monitoring.serviceMonitors.enabled }}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "dw.metricsServiceName" . }}
  labels:
    {{- include "dw.componentLabels" . | nindent 4 }}
    {{ include "dw.metricsJobLabel" . }}: {{ include "dw.componentFullname" . }}
spec:
  type: ClusterIP
  ports:
    - name: metrics
      port: {{ .root.Values.metrics.port }}
      targetPort: metrics
      protocol: TCP
  selector:
    {{- include "dw.componentSelectorLabels" . | nindent 4 }}
{{- end }}
{{- end }}

{{- define "dw.hpa" -}}
{{- $c := index .root.Values .key }}
{{- if $c.autoscaling.enabled }}
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ include "dw.componentFullname" . }}
  labels:
    {{- include "dw.componentLabels" . | nindent 4 }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ include "dw.componentFullname" . }}
  minReplicas: {{ $c.autoscaling.minReplicas }}
  maxReplicas: {{ $c.autoscaling.maxReplicas }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ $c.autoscaling.targetCPUUtilizationPercentage }}
    {{- with $c.autoscaling.extraMetrics }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end }}
{{- end }}

{{- define "dw.pdb" -}}
{{- $c := index .root.Values .key }}
{{- if $c.pdb.create }}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "dw.componentFullname" . }}
  labels:
    {{- include "dw.componentLabels" . | nindent 4 }}
spec:
  # maxUnavailable rather than minAvailable, so a single-replica component never blocks a node drain.
  maxUnavailable: {{ $c.pdb.maxUnavailable }}
  selector:
    matchLabels:
      {{- include "dw.componentSelectorLabels" . | nindent 6 }}
{{- end }}
{{- end }}
