{{/* Chart name, or nameOverride. */}}
{{- define "gpuplane.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Object names: fullnameOverride, else release-chart (the release name alone when it holds the chart name). */}}
{{- define "gpuplane.fullname" -}}
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

{{/* Labels of every object. */}}
{{- define "gpuplane.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "gpuplane.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: node-agent
{{- end }}

{{/* Labels selecting the agent's pods. */}}
{{- define "gpuplane.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gpuplane.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Service account of the pods. */}}
{{- define "gpuplane.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "gpuplane.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Name of the scheduler's objects. */}}
{{- define "gpuplane.scheduler.fullname" -}}
{{- printf "%s-scheduler" (include "gpuplane.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels selecting the scheduler's pods: a name of their own, so that
the node agent's DaemonSet selector never matches them. */}}
{{- define "gpuplane.scheduler.selectorLabels" -}}
app.kubernetes.io/name: {{ printf "%s-scheduler" (include "gpuplane.name" .) | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Labels of the scheduler's objects. */}}
{{- define "gpuplane.scheduler.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "gpuplane.scheduler.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: scheduler
{{- end }}

{{/* "true" when a MIG strategy other than none is configured
(config.flags.migStrategy, or that of any of nodeConfigs.configs; always
with nodeConfigs.name, whose configurations the chart cannot read), as
NVIDIA's chart's addMigMonitorDevices; the strategies are validated in
_validate.tpl. */}}
{{- define "gpuplane.mig" -}}
{{- $strategies := list (dig "flags" "migStrategy" "none" (.Values.config | default dict)) -}}
{{- range $name, $c := .Values.nodeConfigs.configs -}}
{{- $strategies = append $strategies (dig "flags" "migStrategy" "none" (include "gpuplane.nodeConfig" $c | fromYaml)) -}}
{{- end -}}
{{- if .Values.nodeConfigs.name -}}
{{- $strategies = append $strategies "unknown" -}}
{{- end -}}
{{- gt (len (without $strategies "none")) 0 -}}
{{- end }}

{{/* The host directory of the MPS daemons (flags.mpsRoot, NVIDIA's
--mps-root, default /run/nvidia/mps) when the config or one of
nodeConfigs.configs shares GPUs with sharing.mps, else "". A ConfigMap
given by name (nodeConfigs.name) is not read. */}}
{{- define "gpuplane.mpsRoot" -}}
{{- $configs := list (.Values.config | default dict) -}}
{{- range $name, $c := .Values.nodeConfigs.configs -}}
{{- $configs = append $configs (include "gpuplane.nodeConfig" $c | fromYaml) -}}
{{- end -}}
{{- $root := "" -}}
{{- range $configs -}}
{{- if and (not $root) (hasKey (.sharing | default dict) "mps") -}}
{{- $root = dig "flags" "mpsRoot" "/run/nvidia/mps" . -}}
{{- end -}}
{{- end -}}
{{- $root -}}
{{- end }}

{{/* The ConfigMap of the per-node configurations (nodeConfigs): its name,
or "" without them. */}}
{{- define "gpuplane.nodeConfigs" -}}
{{- if .Values.nodeConfigs.name -}}
{{- .Values.nodeConfigs.name -}}
{{- else if .Values.nodeConfigs.configs -}}
{{- include "gpuplane.fullname" . }}-configs
{{- end -}}
{{- end }}

{{/* One configuration of nodeConfigs.configs as YAML: a mapping as the
config value, or NVIDIA's chart's form (config.map), YAML text. */}}
{{- define "gpuplane.nodeConfig" -}}
{{- if kindIs "string" . -}}
{{- . -}}
{{- else -}}
{{- toYaml . -}}
{{- end -}}
{{- end }}

{{/* "true" when the agent talks to the API server for --label-node,
--scheduler-choice (both also under scheduler.enabled), --node-feature-api
or --config-dir (nodeConfigs); the DaemonSet of --kubelet-api=dra mounts the
service-account token too (_nodeagent.tpl). */}}
{{- define "gpuplane.apiAccess" -}}
{{- or .Values.labelNode .Values.schedulerChoice .Values.scheduler.enabled .Values.nodeFeatureAPI (ne (include "gpuplane.nodeConfigs" .) "") -}}
{{- end }}

{{/* Security context of the agent's container: securityContext, else
NVIDIA's chart's choice (nvidia-device-plugin.securityContext) made least
privilege: drop ALL, with SYS_ADMIN added back under MIG and, on nvml, for
DRA, which creates MIG devices (NVIDIA's DRA driver's plugin runs
privileged). Called with a dict of Values and mode (the kubelet API). */}}
{{- define "gpuplane.securityContext" -}}
{{- if .Values.securityContext -}}
{{ toYaml .Values.securityContext }}
{{- else -}}
privileged: false
allowPrivilegeEscalation: false
capabilities:
  drop: ["ALL"]
  {{- if or (eq (include "gpuplane.mig" .) "true") (and (eq .mode "dra") (eq .Values.backend "nvml")) }}
  add: ["SYS_ADMIN"]
  {{- end }}
{{- end -}}
{{- end }}

{{/* Name of the webhook's objects. */}}
{{- define "gpuplane.webhook.fullname" -}}
{{- printf "%s-webhook" (include "gpuplane.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels selecting the webhook's pods: a name of their own, as the
scheduler's. */}}
{{- define "gpuplane.webhook.selectorLabels" -}}
app.kubernetes.io/name: {{ printf "%s-webhook" (include "gpuplane.name" .) | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Labels of the webhook's objects. */}}
{{- define "gpuplane.webhook.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "gpuplane.webhook.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: webhook
{{- end }}

{{/* Secret holding the webhook's tls.crt and tls.key. */}}
{{- define "gpuplane.webhook.secretName" -}}
{{- default (printf "%s-tls" (include "gpuplane.webhook.fullname" .)) .Values.webhook.tls.secretName }}
{{- end }}

{{/* Name of the cost exporter's objects. */}}
{{- define "gpuplane.cost.fullname" -}}
{{- printf "%s-cost" (include "gpuplane.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels selecting the cost exporter's pods: a name of their own. */}}
{{- define "gpuplane.cost.selectorLabels" -}}
app.kubernetes.io/name: {{ printf "%s-cost" (include "gpuplane.name" .) | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Labels of the cost exporter's objects. */}}
{{- define "gpuplane.cost.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "gpuplane.cost.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: cost
{{- end }}

{{/*
The namespaces the GPU policy does not check, as JSON: kube-system, the
release namespace, then webhook.policy.excludeNamespaces, each once
(internal/webhook/policy Policy.ExcludedNamespaces, in the same order for
the policy file the ConfigMap holds). The webhook configurations'
namespaceSelector, the admission policies' bindings and the policy file
the webhook reads all take this one list (docs/webhook.md, "Exemptions").
*/}}
{{- define "gpuplane.webhook.excludeNamespaces" -}}
{{- concat (list "kube-system" .Release.Namespace) (.Values.webhook.policy.excludeNamespaces | default list) | uniq | toJson }}
{{- end }}

{{/*
The node agent's nodes in words, for the notes: nodeSelector's labels and
affinity's required node selector terms (terms or-ed, expressions and-ed),
e.g. "the nodes labelled a=true or b=true"; "every node" without either.
*/}}
{{- define "gpuplane.nodesInWords" -}}
{{- $and := list -}}
{{- range $k, $v := .Values.nodeSelector -}}
{{- $and = append $and (printf "%s=%s" $k (toString $v)) -}}
{{- end -}}
{{- $or := list -}}
{{- range (dig "nodeAffinity" "requiredDuringSchedulingIgnoredDuringExecution" "nodeSelectorTerms" list (.Values.affinity | default dict)) -}}
{{- $term := list -}}
{{- range .matchExpressions -}}
{{- $vals := .values | default list -}}
{{- if and (eq .operator "In") (eq (len $vals) 1) -}}
{{- $term = append $term (printf "%s=%s" .key (first $vals)) -}}
{{- else if eq .operator "Exists" -}}
{{- $term = append $term (printf "%s (any value)" .key) -}}
{{- else if eq .operator "DoesNotExist" -}}
{{- $term = append $term (printf "no %s" .key) -}}
{{- else -}}
{{- $term = append $term (printf "%s %s (%s)" .key .operator (join ", " $vals)) -}}
{{- end -}}
{{- end -}}
{{- if $term -}}
{{- $or = append $or (join " and " $term) -}}
{{- end -}}
{{- end -}}
{{- if $or -}}
{{- $and = append $and (join " or " $or) -}}
{{- end -}}
{{- if $and -}}
the nodes labelled {{ join ", and " $and }}
{{- else -}}
every node
{{- end -}}
{{- end }}

{{/* A role's pod network: hostNetwork, with the DNS policy that keeps
cluster names resolving in it. */}}
{{- define "gpuplane.podNetwork" -}}
{{- if .Values.hostNetwork }}
hostNetwork: true
dnsPolicy: ClusterFirstWithHostNet
{{- end }}
{{- end }}

{{/* The API server's address for client-go's in-cluster configuration
(kubernetesServiceHost, kubernetesServicePort): env entries, or nothing. */}}
{{- define "gpuplane.apiServerEnv" -}}
{{- with .Values.kubernetesServiceHost }}
- name: KUBERNETES_SERVICE_HOST
  value: {{ . | quote }}
{{- end }}
{{- with .Values.kubernetesServicePort }}
- name: KUBERNETES_SERVICE_PORT
  value: {{ . | toString | quote }}
{{- end }}
{{- end }}
