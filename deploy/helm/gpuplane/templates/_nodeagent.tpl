{{/*
The node agent's DaemonSet, for one kubelet API: a dict of root (the
chart's context), mode (device-plugin or dra) and split (nodeAgent.perNode:
one DaemonSet a mode, named <fullname>-<mode>, on the nodes of that mode).
*/}}
{{- define "gpuplane.nodeAgent" }}
{{- $r := .root }}
{{- $mode := .mode }}
{{- $split := .split }}
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: {{ include "gpuplane.fullname" $r }}{{ if $split }}-{{ $mode }}{{ end }}
  namespace: {{ $r.Release.Namespace }}
  labels:
    {{- include "gpuplane.labels" $r | nindent 4 }}
spec:
  selector:
    matchLabels:
      {{- include "gpuplane.selectorLabels" $r | nindent 6 }}
      {{- if $split }}
      gpuplane.io/kubelet-api: {{ $mode }}
      {{- end }}
  {{- with $r.Values.updateStrategy }}
  updateStrategy:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  template:
    metadata:
      labels:
        {{- include "gpuplane.selectorLabels" $r | nindent 8 }}
        {{- if $split }}
        gpuplane.io/kubelet-api: {{ $mode }}
        {{- end }}
        {{- with $r.Values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        # The agent reads --config once, at start: restart it on a change.
        checksum/config: {{ include (print $r.Template.BasePath "/configmap.yaml") $r | sha256sum }}
        {{- with $r.Values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "gpuplane.serviceAccountName" $r }}
      {{- with include "gpuplane.podNetwork" $r }}
      {{- . | nindent 6 }}
      {{- end }}
      # The API token only where the agent uses the API server.
      automountServiceAccountToken: {{ or (eq (include "gpuplane.apiAccess" $r) "true") (eq $mode "dra") }}
      {{- with $r.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $r.Values.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      {{- with $r.Values.runtimeClassName }}
      runtimeClassName: {{ . }}
      {{- end }}
      containers:
        - name: node-agent
          image: "{{ $r.Values.image.repository }}:{{ $r.Values.image.tag | default $r.Chart.AppVersion }}"
          imagePullPolicy: {{ $r.Values.image.pullPolicy }}
          command: ["gpuplane-node-agent"]
          args:
            - --backend={{ $r.Values.backend }}
            {{- if eq $r.Values.backend "mock" }}
            - --mock-profile={{ $r.Values.mock.profile }}
            {{- end }}
            - --device-plugin-dir={{ $r.Values.devicePluginDir }}
            {{- with $r.Values.nodeAgent.driverRoot }}
            - --driver-root={{ . }}
            - --container-driver-root=/driver-root
            {{- end }}
            {{- if and (ne $mode "dra") $r.Values.nodeAgent.cdiDir }}
            - --cdi-dir={{ $r.Values.nodeAgent.cdiDir }}
            {{- end }}
            {{- if eq $mode "dra" }}
            {{- with $r.Values.nodeAgent.dra }}
            - --kubelet-api=dra
            - --dra-plugin-dir={{ .pluginsDir }}/gpu.nvidia.com
            - --dra-registrar-dir={{ .registrarDir }}
            {{- if .cdiDir }}
            - --cdi-dir={{ .cdiDir }}
            {{- end }}
            {{- if .cdiToolkitSpec }}
            {{- if not .cdiDir }}
            {{- fail "nodeAgent.dra.cdiToolkitSpec needs nodeAgent.dra.cdiDir: the toolkit's spec is read only where the agent writes specs" }}
            {{- end }}
            - --cdi-toolkit-spec={{ .cdiToolkitSpec }}
            {{- end }}
            {{- if .shares }}
            - --dra-shares
            {{- end }}
            {{- $cs := "" }}
            {{- if not (kindIs "invalid" .consumableShares) }}
            {{- $cs = toString .consumableShares }}
            {{- end }}
            {{- if ne $cs "" }}
            {{- if not (regexMatch "^(memory|unlimited|[1-9][0-9]{0,2}|1000)$" $cs) }}
            {{- fail (printf "nodeAgent.dra.consumableShares: %q; want memory, unlimited or a count 1..1000 (NVIDIA's --consumable-shares modes)" $cs) }}
            {{- end }}
            - --dra-consumable-shares={{ $cs }}
            {{- end }}
            {{- if not (has .migOrder (list "core" "table")) }}
            {{- fail (printf "nodeAgent.dra.migOrder: %q; want core or table" (toString .migOrder)) }}
            {{- end }}
            - --dra-mig-order={{ .migOrder }}
            {{- end }}
            {{- end }}
            - --pod-resources-socket={{ $r.Values.podResourcesDir }}/kubelet.sock
            - --metrics-addr=:{{ $r.Values.metrics.port }}
            {{- if $r.Values.config }}
            - --config=/etc/gpuplane/config.yaml
            {{- end }}
            {{- if include "gpuplane.nodeConfigs" $r }}
            {{- with $r.Values.nodeConfigs }}
            - --config-dir=/etc/gpuplane/configs
            {{- with .default }}
            - --default-config={{ . }}
            {{- end }}
            - --fallback-strategies={{ join "," .fallbackStrategies }}
            {{- end }}
            {{- end }}
            {{- if or $r.Values.labelNode $r.Values.scheduler.enabled }}
            - --label-node
            {{- end }}
            {{- if or $r.Values.schedulerChoice $r.Values.scheduler.enabled }}
            - --scheduler-choice
            {{- end }}
            {{- with $r.Values.labelsFile }}
            - --labels-file={{ . }}
            {{- end }}
            {{- if $r.Values.nodeFeatureAPI }}
            - --node-feature-api
            {{- end }}
            {{- with $r.Values.extraArgs }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          env:
            {{- with include "gpuplane.apiServerEnv" $r }}
            {{- . | nindent 12 }}
            {{- end }}
            # --node-name defaults to $NODE_NAME: the Node --label-node
            # patches and the Hostname label of the metrics.
            - name: NODE_NAME
              valueFrom:
                fieldRef:
                  fieldPath: spec.nodeName
            {{- if $r.Values.nodeFeatureAPI }}
            # --namespace defaults to $POD_NAMESPACE: where the NodeFeature
            # object is written.
            - name: POD_NAMESPACE
              valueFrom:
                fieldRef:
                  fieldPath: metadata.namespace
            {{- end }}
            {{- if eq $r.Values.backend "nvml" }}
            # For the NVIDIA container runtime: every GPU and the driver's
            # NVML library (utility) in the container; with DRA or
            # sharing.mps also the driver's MPS programs,
            # nvidia-cuda-mps-control and -server (compute), which the
            # agent runs on the image's glibc (docs/image.md).
            - name: NVIDIA_VISIBLE_DEVICES
              value: all
            - name: NVIDIA_DRIVER_CAPABILITIES
              value: {{ if or (eq $mode "dra") (include "gpuplane.mpsRoot" $r) }}compute,utility{{ else }}utility{{ end }}
            {{- if or (eq (include "gpuplane.mig" $r) "true") (eq $mode "dra") }}
            # MIG: the MIG monitoring capability in the container, as
            # NVIDIA's chart gives its device plugin.
            - name: NVIDIA_MIG_MONITOR_DEVICES
              value: all
            {{- end }}
            {{- if eq $mode "dra" }}
            # DRA creates and destroys MIG devices: the MIG configuration
            # capability, as NVIDIA's DRA driver's chart gives its plugin.
            - name: NVIDIA_MIG_CONFIG_DEVICES
              value: all
            {{- end }}
            {{- end }}
          ports:
            - name: metrics
              containerPort: {{ $r.Values.metrics.port }}
              protocol: TCP
          # The metrics endpoint starts once the GPUs are discovered and the
          # device-plugin configuration is checked.
          readinessProbe:
            httpGet:
              path: /metrics
              port: metrics
            periodSeconds: 10
          livenessProbe:
            httpGet:
              path: /metrics
              port: metrics
            initialDelaySeconds: 30
            periodSeconds: 30
            timeoutSeconds: 5
          securityContext:
            {{- include "gpuplane.securityContext" (dict "Values" $r.Values "mode" $mode) | nindent 12 }}
          {{- with $r.Values.resources }}
          resources:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          volumeMounts:
            - name: device-plugin
              mountPath: {{ $r.Values.devicePluginDir }}
            - name: pod-resources
              mountPath: {{ $r.Values.podResourcesDir }}
              readOnly: true
            {{- if and (ne $mode "dra") $r.Values.nodeAgent.cdiDir }}
            - name: cdi
              mountPath: {{ $r.Values.nodeAgent.cdiDir }}
            {{- end }}
            {{- if eq $mode "dra" }}
            - name: dra-plugins
              mountPath: {{ $r.Values.nodeAgent.dra.pluginsDir }}
            - name: dra-registrar
              mountPath: {{ $r.Values.nodeAgent.dra.registrarDir }}
            {{- with $r.Values.nodeAgent.dra.cdiDir }}
            - name: cdi
              mountPath: {{ . }}
            {{- end }}
            {{- with $r.Values.nodeAgent.dra.cdiToolkitSpec }}
            {{- if ne (dir .) $r.Values.nodeAgent.dra.cdiDir }}
            - name: cdi-toolkit
              mountPath: {{ dir . }}
              readOnly: true
            {{- end }}
            {{- end }}
            {{- end }}
            {{- if $r.Values.nodeAgent.driverRoot }}
            # The driver's files, for the CDI specs, at /driver-root as
            # NVIDIA's DRA driver mounts them (the specs name the host's
            # paths); a driver container's mounts propagate.
            - name: driver-root
              mountPath: /driver-root
              readOnly: true
              mountPropagation: HostToContainer
            {{- end }}
            {{- if $r.Values.config }}
            - name: config
              mountPath: /etc/gpuplane
              readOnly: true
            {{- end }}
            {{- if include "gpuplane.nodeConfigs" $r }}
            - name: configs
              mountPath: /etc/gpuplane/configs
              readOnly: true
            {{- end }}
            {{- if $r.Values.labelsFile }}
            - name: labels-dir
              mountPath: {{ dir $r.Values.labelsFile }}
            {{- end }}
            {{- with include "gpuplane.mpsRoot" $r }}
            # sharing.mps: the daemons' pipe and log directories under
            # <mpsRoot>, which Allocate mounts into containers, and their
            # shared memory, <mpsRoot>/shm, as the agent's /dev/shm (what
            # containers get as theirs), as NVIDIA's mps-control-daemon.
            - name: mps-root
              mountPath: {{ . }}
            - name: mps-shm
              mountPath: /dev/shm
            {{- end }}
      volumes:
        - name: device-plugin
          hostPath:
            path: {{ $r.Values.devicePluginDir }}
            type: Directory
        - name: pod-resources
          hostPath:
            path: {{ $r.Values.podResourcesDir }}
            type: Directory
        {{- if and (ne $mode "dra") $r.Values.nodeAgent.cdiDir }}
        - name: cdi
          hostPath:
            path: {{ $r.Values.nodeAgent.cdiDir }}
            type: DirectoryOrCreate
        {{- end }}
        {{- if eq $mode "dra" }}
        - name: dra-plugins
          hostPath:
            path: {{ $r.Values.nodeAgent.dra.pluginsDir }}
            type: DirectoryOrCreate
        - name: dra-registrar
          hostPath:
            path: {{ $r.Values.nodeAgent.dra.registrarDir }}
            type: Directory
        {{- with $r.Values.nodeAgent.dra.cdiDir }}
        - name: cdi
          hostPath:
            path: {{ . }}
            type: DirectoryOrCreate
        {{- end }}
        {{- with $r.Values.nodeAgent.dra.cdiToolkitSpec }}
        {{- if ne (dir .) $r.Values.nodeAgent.dra.cdiDir }}
        - name: cdi-toolkit
          hostPath:
            path: {{ dir . }}
            type: DirectoryOrCreate
        {{- end }}
        {{- end }}
        {{- end }}
        {{- with $r.Values.nodeAgent.driverRoot }}
        - name: driver-root
          hostPath:
            path: {{ . }}
            type: Directory
        {{- end }}
        {{- if $r.Values.config }}
        - name: config
          configMap:
            name: {{ include "gpuplane.fullname" $r }}
        {{- end }}
        {{- with include "gpuplane.nodeConfigs" $r }}
        # One file per configuration; the node's label
        # nvidia.com/device-plugin.config names its own.
        - name: configs
          configMap:
            name: {{ . }}
        {{- end }}
        {{- if $r.Values.labelsFile }}
        - name: labels-dir
          hostPath:
            path: {{ dir $r.Values.labelsFile }}
            type: DirectoryOrCreate
        {{- end }}
        {{- with include "gpuplane.mpsRoot" $r }}
        - name: mps-root
          hostPath:
            path: {{ . }}
            type: DirectoryOrCreate
        - name: mps-shm
          hostPath:
            path: {{ . }}/shm
            type: DirectoryOrCreate
        {{- end }}
      {{- with $r.Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with include "gpuplane.nodeAgentAffinity" . | fromYaml }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $r.Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end }}

{{/*
The node agent's affinity for a dict of root, mode and split: the
chart's affinity; under nodeAgent.perNode, each of its node selector terms
also requires the node's label gpuplane.io/kubelet-api to pick this mode:
In [mode], or for nodeAgent.kubeletAPI's mode, the default of unlabelled
nodes, NotIn [the other]. So every node matches exactly one DaemonSet and
never serves its GPUs both ways (NVIDIA/aicr#332).
*/}}
{{- define "gpuplane.nodeAgentAffinity" }}
{{- $aff := deepCopy (.root.Values.affinity | default dict) }}
{{- if .split }}
{{- $other := ternary "dra" "device-plugin" (eq .mode "device-plugin") }}
{{- $expr := dict "key" "gpuplane.io/kubelet-api" "operator" "In" "values" (list .mode) }}
{{- if eq .mode .root.Values.nodeAgent.kubeletAPI }}
{{- $expr = dict "key" "gpuplane.io/kubelet-api" "operator" "NotIn" "values" (list $other) }}
{{- end }}
{{- $na := $aff.nodeAffinity | default dict }}
{{- $req := $na.requiredDuringSchedulingIgnoredDuringExecution | default (dict "nodeSelectorTerms" (list (dict))) }}
{{- $terms := list }}
{{- range $req.nodeSelectorTerms }}
{{- $t := deepCopy . }}
{{- $_ := set $t "matchExpressions" (append ($t.matchExpressions | default list) $expr) }}
{{- $terms = append $terms $t }}
{{- end }}
{{- $_ := set $req "nodeSelectorTerms" $terms }}
{{- $_ := set $na "requiredDuringSchedulingIgnoredDuringExecution" $req }}
{{- $_ := set $aff "nodeAffinity" $na }}
{{- end }}
{{- if $aff }}
{{- toYaml $aff }}
{{- end }}
{{- end }}
