{{/*
The chart's refusals of what cannot work, at render time (helm template and
helm install alike), each a one-line error naming the value: the cluster's
version for the roles that need a newer one, scheduler.policy, the
agent's configuration (config, and each of nodeConfigs.configs) as the
agent's own parser (api/config/v1, ParseConfig) would refuse it, and
mutatingAdmissionPolicies. daemonset.yaml includes it, so every render runs
it. deploy/helm TestConfigsAgreeWithAgent runs the agent's parser over
deploy/helm/testdata/configs and checks the chart renders exactly those it
accepts.
*/}}
{{- define "gpuplane.validate" -}}
{{- $v := .Values -}}
{{- $kube := .Capabilities.KubeVersion.Version -}}
{{- if and $v.scheduler.enabled (semverCompare "<1.37.0-0" $kube) -}}
{{- fail (printf "scheduler.enabled: gpuplane-scheduler is kube-scheduler v1.37.2 and needs Kubernetes 1.37 or later; the cluster is %s" $kube) -}}
{{- end -}}
{{- if and (or (eq $v.nodeAgent.kubeletAPI "dra") $v.nodeAgent.perNode) (semverCompare "<1.34.0-0" $kube) -}}
{{- fail (printf "nodeAgent.kubeletAPI: dra needs Kubernetes 1.34 or later (resource.k8s.io/v1); the cluster is %s" $kube) -}}
{{- end -}}
{{- if and $v.webhook.enabled $v.webhook.admissionPolicy.enabled (semverCompare "<1.34.0-0" $kube) -}}
{{- fail (printf "webhook.admissionPolicy.enabled: its CEL needs Kubernetes 1.34 or later (list extensions); the cluster is %s: set it false" $kube) -}}
{{- end -}}
{{- if $v.scheduler.enabled -}}
{{- $names := include "gpuplane.policyNames" . | fromJsonArray -}}
{{- if not (has $v.scheduler.policy $names) -}}
{{- fail (printf "scheduler.policy: %q is not a policy%s; want one of %s" (toString $v.scheduler.policy) (include "gpuplane.didYouMean" (dict "given" $v.scheduler.policy "names" $names)) (join ", " $names)) -}}
{{- end -}}
{{- end -}}
{{- if not (has (toString $v.mutatingAdmissionPolicies) (list "auto" "true" "false")) -}}
{{- fail (printf "mutatingAdmissionPolicies: %q; want auto, true or false" (toString $v.mutatingAdmissionPolicies)) -}}
{{- end -}}
{{- if $v.config -}}
{{- include "gpuplane.validateConfig" (dict "c" $v.config "where" "config") -}}
{{- end -}}
{{- include "gpuplane.validateNodeConfigs" . -}}
{{- end }}

{{/*
nodeConfigs: instead of config; configs or the name of a ConfigMap, not
both; each configuration as config, keys that can be ConfigMap keys, a
default among them, NVIDIA's fallback strategies.
*/}}
{{- define "gpuplane.validateNodeConfigs" -}}
{{- $n := .Values.nodeConfigs -}}
{{- if and .Values.config (include "gpuplane.nodeConfigs" .) -}}
{{- fail "config and nodeConfigs exclude each other: one configuration for every node, or one per node (the node label nvidia.com/device-plugin.config)" -}}
{{- end -}}
{{- if and $n.configs $n.name -}}
{{- fail "nodeConfigs.configs and nodeConfigs.name exclude each other: the chart's ConfigMap or yours" -}}
{{- end -}}
{{- range $name, $c := $n.configs -}}
{{- $w := printf "nodeConfigs.configs.%s" $name -}}
{{- if or (not (regexMatch "^[-._a-zA-Z0-9]+$" $name)) (hasPrefix ".." $name) -}}
{{- fail (printf "%s: not a ConfigMap key (letters, digits, -, _ and ., not starting with ..)" $w) -}}
{{- end -}}
{{- $m := $c -}}
{{- if kindIs "string" $c -}}
{{- $m = fromYaml $c -}}
{{- if hasKey $m "Error" -}}
{{- fail (printf "%s: %s" $w $m.Error) -}}
{{- end -}}
{{- end -}}
{{- include "gpuplane.validateConfig" (dict "c" $m "where" $w) -}}
{{- end -}}
{{- if and $n.configs $n.default (not (hasKey $n.configs $n.default)) -}}
{{- fail (printf "nodeConfigs.default: %q is not one of nodeConfigs.configs (%s)" $n.default (keys $n.configs | sortAlpha | join ", ")) -}}
{{- end -}}
{{- range $n.fallbackStrategies -}}
{{- if not (has . (list "named" "single" "empty")) -}}
{{- fail (printf "nodeConfigs.fallbackStrategies: %q; want named, single or empty (NVIDIA's config-manager's)" (toString .)) -}}
{{- end -}}
{{- end -}}
{{- end }}

{{/*
gpuplane-scheduler's placement policies, as JSON: placement.Names in
internal/placement/registry.go, the one home of the names (deploy/helm
TestPolicyNames fails when they differ).
*/}}
{{- define "gpuplane.policyNames" -}}
["random", "dotproduct", "gpupacking", "gpuclustering", "bestfit", "fgd", "leastallocated", "mostallocated", "fgdcm"]
{{- end }}

{{/*
" (did you mean A or B?)" for given among names, or "": the names equal to
it but for case, "-" and "_", made of the same letters (fdg: fgd), or one
letter added, removed or replaced away. A dict of given and names.
*/}}
{{- define "gpuplane.didYouMean" -}}
{{- $g := .given | toString | lower | replace "-" "" | replace "_" "" -}}
{{- $gs := splitList "" $g | sortAlpha | join "" -}}
{{- $out := list -}}
{{- range $n := .names -}}
{{- $near := eq $gs (splitList "" $n | sortAlpha | join "") -}}
{{- if eq (len $g) (len $n) -}}
{{- $diff := 0 -}}
{{- range $i := until (len $n) -}}
{{- if ne (substr $i (add1 $i | int) $n) (substr $i (add1 $i | int) $g) -}}
{{- $diff = add1 $diff -}}
{{- end -}}
{{- end -}}
{{- $near = or $near (le (int $diff) 1) -}}
{{- else -}}
{{- $long := ternary $n $g (gt (len $n) (len $g)) -}}
{{- $short := ternary $g $n (gt (len $n) (len $g)) -}}
{{- if eq (len $long) (add1 (len $short) | int) -}}
{{- range $i := until (len $long) -}}
{{- if eq (print (substr 0 $i $long) (substr (add1 $i | int) (len $long) $long)) $short -}}
{{- $near = true -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $near -}}
{{- $out = append $out $n -}}
{{- end -}}
{{- end -}}
{{- if $out -}}
{{- printf " (did you mean %s?)" (join " or " $out) -}}
{{- end -}}
{{- end }}

{{/*
The agent's configuration file's rules (api/config/v1: schema.go and
Config.complete in config.go), for a dict of c (the configuration) and
where (the value's path, in the errors).
*/}}
{{- define "gpuplane.validateConfig" -}}
{{- $c := .c -}}
{{- $w := .where -}}
{{- if not (kindIs "map" $c) -}}
{{- fail (printf "%s: want the agent's configuration file as a mapping, got %s" $w (kindOf $c)) -}}
{{- end -}}
{{- if and (hasKey $c "kind") (hasKey $c "data") -}}
{{- fail (printf "%s: this is a ConfigMap: pass one of its keys (%s), or all of them as nodeConfigs.configs" $w (keys (get $c "data" | default dict) | sortAlpha | join ", ")) -}}
{{- end -}}
{{- include "gpuplane.knownKeys" (dict "m" $c "where" $w "keys" (list "version" "flags" "resources" "sharing" "imex" "gpuplane")) -}}
{{- if and $c.version (ne (toString $c.version) "v1") -}}
{{- fail (printf "%s.version: %q is not supported; want v1" $w (toString $c.version)) -}}
{{- end -}}
{{- $flags := $c.flags | default dict -}}
{{- include "gpuplane.knownKeys" (dict "m" $flags "where" (print $w ".flags") "keys" (list "migStrategy" "plugin" "gfd" "failOnInitError" "nvidiaDriverRoot" "nvidiaDevRoot" "deviceDiscoveryStrategy" "mpsRoot" "gdrcopyEnabled" "gdsEnabled" "mofedEnabled" "useNodeFeatureAPI")) -}}
{{- $mig := $flags.migStrategy | default "none" -}}
{{- if not (has $mig (list "none" "single" "mixed")) -}}
{{- fail (printf "%s.flags.migStrategy: %q; want none, single or mixed" $w (toString $mig)) -}}
{{- end -}}
{{- include "gpuplane.knownKeys" (dict "m" ($flags.gfd | default dict) "where" (print $w ".flags.gfd") "keys" (list "oneshot" "noTimestamp" "sleepInterval" "outputFile" "machineTypeFile")) -}}
{{- $plugin := $flags.plugin | default dict -}}
{{- include "gpuplane.knownKeys" (dict "m" $plugin "where" (print $w ".flags.plugin") "keys" (list "passDeviceSpecs" "deviceListStrategy" "deviceIDStrategy" "cdiAnnotationPrefix" "nvidiaCTKPath" "containerDriverRoot" "sharedDevicesAllocationPolicy")) -}}
{{- include "gpuplane.bools" (dict "m" $plugin "where" (print $w ".flags.plugin") "keys" (list "passDeviceSpecs")) -}}
{{- $lists := $plugin.deviceListStrategy | default list -}}
{{- if kindIs "string" $lists -}}{{- $lists = list $lists -}}{{- end -}}
{{- range $i, $s := $lists -}}
{{- if not (has $s (list "envvar" "cdi-annotations" "cdi-cri")) -}}
{{- fail (printf "%s.flags.plugin.deviceListStrategy[%d]: %q; want envvar, cdi-annotations or cdi-cri" $w $i (toString $s)) -}}
{{- end -}}
{{- if has $s (slice $lists 0 $i) -}}
{{- fail (printf "%s.flags.plugin.deviceListStrategy[%d]: %q is listed twice" $w $i $s) -}}
{{- end -}}
{{- end -}}
{{- if not (has ($plugin.deviceIDStrategy | default "uuid") (list "uuid")) -}}
{{- fail (printf "%s.flags.plugin.deviceIDStrategy: %q is not supported; device IDs are UUIDs (uuid)" $w (toString $plugin.deviceIDStrategy)) -}}
{{- end -}}
{{- $sharing := $c.sharing | default dict -}}
{{- include "gpuplane.knownKeys" (dict "m" $sharing "where" (print $w ".sharing") "keys" (list "timeSlicing" "mps")) -}}
{{- /* sharing.mps as the agent checks it (api/config/v1 mps.go completeMPS). */ -}}
{{- $mps := false -}}
{{- if hasKey $sharing "mps" -}}
{{- $mps = true -}}
{{- $m := $sharing.mps | default dict -}}
{{- include "gpuplane.knownKeys" (dict "m" $m "where" (print $w ".sharing.mps") "keys" (list "renameByDefault" "failRequestsGreaterThanOne" "resources")) -}}
{{- include "gpuplane.bools" (dict "m" $m "where" (print $w ".sharing.mps") "keys" (list "renameByDefault" "failRequestsGreaterThanOne")) -}}
{{- if not $m.resources -}}
{{- fail (printf "%s.sharing.mps.resources: no resources specified" $w) -}}
{{- end -}}
{{- if ($sharing.timeSlicing | default dict).resources -}}
{{- fail (printf "%s.sharing.mps: cannot be combined with sharing.timeSlicing: one sharing strategy at a time" $w) -}}
{{- end -}}
{{- if eq (toString $flags.migStrategy) "mixed" -}}
{{- fail (printf "%s.sharing.mps: migStrategy mixed is not supported with MPS, as in NVIDIA's plugin" $w) -}}
{{- end -}}
{{- range $i, $r := $m.resources -}}
{{- $f := printf "%s.sharing.mps.resources[%d]" $w $i -}}
{{- include "gpuplane.knownKeys" (dict "m" $r "where" $f "keys" (list "name" "rename" "devices" "replicas")) -}}
{{- if ne (toString $r.name) "nvidia.com/gpu" -}}
{{- fail (printf "%s.name: %q; MPS shares whole GPUs only (nvidia.com/gpu), as NVIDIA's plugin" $f (toString $r.name)) -}}
{{- end -}}
{{- if gt $i 0 -}}
{{- fail (printf "%s.name: %q is listed twice" $f (toString $r.name)) -}}
{{- end -}}
{{- $n := $r.replicas | default 0 -}}
{{- if or (not (or (kindIs "float64" $n) (kindIs "int64" $n) (kindIs "int" $n))) (ne (float64 $n) (float64 (int64 $n))) (lt (int64 $n) 1) (gt (int64 $n) 100) -}}
{{- fail (printf "%s.replicas: %v is out of range (1..100)" $f $n) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $gpuReplicas := 1 -}}
{{- if hasKey $sharing "timeSlicing" -}}
{{- $ts := $sharing.timeSlicing | default dict -}}
{{- include "gpuplane.knownKeys" (dict "m" $ts "where" (print $w ".sharing.timeSlicing") "keys" (list "renameByDefault" "failRequestsGreaterThanOne" "resources")) -}}
{{- include "gpuplane.bools" (dict "m" $ts "where" (print $w ".sharing.timeSlicing") "keys" (list "renameByDefault" "failRequestsGreaterThanOne")) -}}
{{- if not $ts.resources -}}
{{- fail (printf "%s.sharing.timeSlicing.resources: no resources specified" $w) -}}
{{- end -}}
{{- $seen := list -}}
{{- range $i, $r := $ts.resources -}}
{{- $f := printf "%s.sharing.timeSlicing.resources[%d]" $w $i -}}
{{- include "gpuplane.knownKeys" (dict "m" $r "where" $f "keys" (list "name" "rename" "devices" "replicas")) -}}
{{- if not (regexMatch "^nvidia\\.com/(gpu|mig-[1-8]g\\.[1-9][0-9]*gb([.+]me)?)$" (toString $r.name)) -}}
{{- fail (printf "%s.name: %q; want nvidia.com/gpu or nvidia.com/mig-<profile>" $f (toString $r.name)) -}}
{{- end -}}
{{- if has $r.name $seen -}}
{{- fail (printf "%s.name: %q is listed twice" $f $r.name) -}}
{{- end -}}
{{- $seen = append $seen $r.name -}}
{{- $n := $r.replicas | default 0 -}}
{{- if or (not (or (kindIs "float64" $n) (kindIs "int64" $n) (kindIs "int" $n))) (ne (float64 $n) (float64 (int64 $n))) (lt (int64 $n) 1) (gt (int64 $n) 1024) -}}
{{- fail (printf "%s.replicas: %v is out of range (1..1024)" $f $n) -}}
{{- end -}}
{{- if eq $r.name "nvidia.com/gpu" -}}{{- $gpuReplicas = int64 $n -}}{{- end -}}
{{- include "gpuplane.validateDevices" (dict "d" $r.devices "where" (print $f ".devices") "set" (hasKey $r "devices")) -}}
{{- end -}}
{{- end -}}
{{- $gp := $c.gpuplane | default dict -}}
{{- include "gpuplane.knownKeys" (dict "m" $gp "where" (print $w ".gpuplane") "keys" (list "replicaPolicy" "ignoredXIDs" "milliGPU")) -}}
{{- include "gpuplane.bools" (dict "m" $gp "where" (print $w ".gpuplane") "keys" (list "milliGPU")) -}}
{{- range $i, $x := $gp.ignoredXIDs | default list -}}
{{- if not (and (or (kindIs "float64" $x) (kindIs "int64" $x)) (eq (float64 $x) (float64 (int64 $x))) (ge (int64 $x) 0)) -}}
{{- fail (printf "%s.gpuplane.ignoredXIDs[%d]: %v; want an XID, a whole number from 0" $w $i $x) -}}
{{- end -}}
{{- end -}}
{{- if not (has ($gp.replicaPolicy | default "spread") (list "spread" "pack")) -}}
{{- fail (printf "%s.gpuplane.replicaPolicy: %q; want spread or pack" $w (toString $gp.replicaPolicy)) -}}
{{- end -}}
{{- if and $gp.milliGPU $mps -}}
{{- fail (printf "%s.gpuplane.milliGPU: cannot be combined with sharing.mps: both would share the same GPUs under two counts" $w) -}}
{{- end -}}
{{- if and $gp.milliGPU (gt (int64 $gpuReplicas) 1) -}}
{{- fail (printf "%s.gpuplane.milliGPU: cannot be combined with time-slicing of nvidia.com/gpu (sharing.timeSlicing.resources)" $w) -}}
{{- end -}}
{{- end }}

{{/*
A time-slicing resource's devices in NVIDIA's forms (replicas.go): all, a
count over 0, or a list of GPU indices, MIG indices gpu:mig and UUIDs. A
dict of d, where and set (the key is there).
*/}}
{{- define "gpuplane.validateDevices" -}}
{{- $d := .d -}}
{{- if .set -}}
{{- if kindIs "string" $d -}}
{{- if ne $d "all" -}}
{{- fail (printf "%s: %q but the only valid string input is 'all'" .where $d) -}}
{{- end -}}
{{- else if or (kindIs "float64" $d) (kindIs "int64" $d) -}}
{{- if le (float64 $d) 0.0 -}}
{{- fail (printf "%s: %v but a count of devices must be > 0" .where $d) -}}
{{- end -}}
{{- else if kindIs "slice" $d -}}
{{- $uuid := "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}" -}}
{{- range $d -}}
{{- if not (or (kindIs "float64" .) (kindIs "int64" .) (regexMatch (printf "^([0-9]+|[0-9]+:[0-9]+|(GPU|MIG)-%s|MIG-GPU-%s/[0-9]+/[0-9]+)$" $uuid $uuid) (toString .))) -}}
{{- fail (printf "%s: unsupported device %v; want a GPU index, a MIG index (gpu:mig) or a GPU or MIG UUID" $.where .) -}}
{{- end -}}
{{- end -}}
{{- else -}}
{{- fail (printf "%s: want all, a count or a list of devices" .where) -}}
{{- end -}}
{{- end -}}
{{- end }}

{{/* Fails on a key of m among keys whose value is not true or false: a
dict of m, where and keys. */}}
{{- define "gpuplane.bools" -}}
{{- range $k := .keys -}}
{{- if and (hasKey $.m $k) (not (kindIs "bool" (get $.m $k))) (not (kindIs "invalid" (get $.m $k))) -}}
{{- fail (printf "%s.%s: %v; want true or false" $.where $k (get $.m $k)) -}}
{{- end -}}
{{- end -}}
{{- end }}

{{/* Fails on a key of m not in keys: a dict of m, where and keys. */}}
{{- define "gpuplane.knownKeys" -}}
{{- if not (kindIs "map" .m) -}}
{{- fail (printf "%s: want a mapping" .where) -}}
{{- end -}}
{{- range $k := keys .m | sortAlpha -}}
{{- if not (has $k $.keys) -}}
{{- fail (printf "%s.%s: unknown field; want one of %s" $.where $k (join ", " $.keys)) -}}
{{- end -}}
{{- end -}}
{{- end }}

{{/*
"true" where the MutatingAdmissionPolicies are rendered:
mutatingAdmissionPolicies true, or auto where the cluster serves
admissionregistration.k8s.io/v1 MutatingAdmissionPolicy (.Capabilities:
helm install asks the API server; helm template knows only its
--api-versions, so offline renderers such as Argo CD and Flux set true).
*/}}
{{- define "gpuplane.mutatingAdmissionPolicies" -}}
{{- $v := toString .Values.mutatingAdmissionPolicies -}}
{{- or (eq $v "true") (and (eq $v "auto") (.Capabilities.APIVersions.Has "admissionregistration.k8s.io/v1/MutatingAdmissionPolicy")) -}}
{{- end }}
