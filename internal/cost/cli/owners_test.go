// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

func controllerRef(apiVersion, kind string, o metav1.Object) []metav1.OwnerReference {
	t := true
	return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: o.GetName(), UID: o.GetUID(), Controller: &t}}
}

// TestOwnersRealAPIServer creates the bundled day's pods in a real
// kube-apiserver under owners (no controller manager runs, so the test
// writes the owner references as the controllers would) and checks the
// rows by job and team:
//
//	ml/train-1, ml/train-2   Job pretrain          -> ml/pretrain 8848 + 13272 = 22120 c
//	                                                  (the series' label job llm loses to the owner)
//	web/infer-1, web/ts-1    ReplicaSet frontend-5d4f of Deployment frontend
//	                                                -> web/frontend 19908 + 168 = 20076 c
//	ml/mig-a                 Job mig-sweep         -> ml/mig-sweep 5688 c
//	ml/blackwell-1                Job blackwell              -> ml/blackwell 0 c
//	web/mig-b                no controller         -> web/mig-b 3792 c
//	ml/ts-2                  not in the cluster    -> its series' labels: none, the pod, 504 c
//
// Namespace ml is labelled team vision, web team serving. By team without
// a teams file: vision 22120 + 5688 + 0 + 504 = 28312 c, serving 20076 +
// 3792 = 23868 c; with a teams file that gives only ml (team research),
// research 28312 c and web still serving from its label.
func TestOwnersRealAPIServer(t *testing.T) {
	// No controller manager: the test writes the owner chains as the
	// controllers would, and the ReplicaSet and Job controllers would add
	// pods of their own.
	c := kube.StartT(t, kube.Options{NoControllerManager: true})
	ctx := t.Context()
	cs := c.Client
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for ns, team := range map[string]string{"ml": "vision", "web": "serving"} {
		must(cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"gpuplane.io/team": team}}}, metav1.CreateOptions{}))
	}
	spec := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "train:1"}}}
	pod := func(ns, name string, refs []metav1.OwnerReference) {
		t.Helper()
		must(cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, OwnerReferences: refs}, Spec: spec}, metav1.CreateOptions{}))
	}
	job := func(name string) *batchv1.Job {
		t.Helper()
		j, err := cs.BatchV1().Jobs("ml").Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: spec}}}, metav1.CreateOptions{})
		must(j, err)
		return j
	}
	pretrain := job("pretrain")
	pod("ml", "train-1", controllerRef("batch/v1", "Job", pretrain))
	pod("ml", "train-2", controllerRef("batch/v1", "Job", pretrain))
	pod("ml", "mig-a", controllerRef("batch/v1", "Job", job("mig-sweep")))
	pod("ml", "blackwell-1", controllerRef("batch/v1", "Job", job("blackwell")))
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "frontend"}}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "frontend"}}, Spec: corev1.PodSpec{Containers: spec.Containers}}
	dep, err := cs.AppsV1().Deployments("web").Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "frontend"}, Spec: appsv1.DeploymentSpec{Selector: sel, Template: tmpl}}, metav1.CreateOptions{})
	must(dep, err)
	rs, err := cs.AppsV1().ReplicaSets("web").Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "frontend-5d4f", OwnerReferences: controllerRef("apps/v1", "Deployment", dep)},
		Spec: appsv1.ReplicaSetSpec{Selector: sel, Template: tmpl}}, metav1.CreateOptions{})
	must(rs, err)
	pod("web", "infer-1", controllerRef("apps/v1", "ReplicaSet", rs))
	pod("web", "ts-1", controllerRef("apps/v1", "ReplicaSet", rs))
	pod("web", "mig-b", nil)

	o := Options{OpenMetrics: dayFile, Kubeconfig: c.Kubeconfig, TeamLabel: "gpuplane.io/team", Format: "json"}
	reps := map[string]Report{}
	for _, by := range []string{"job", "team"} {
		o.By = by
		reps[by] = decode(t, o)
	}
	checkRows(t, "job", reps["job"], map[string]int64{"ml/pretrain": 22120, "web/frontend": 20076, "ml/mig-sweep": 5688, "ml/blackwell": 0, "web/mig-b": 3792, "ml/ts-2": 504, "(unattributed)": 28})
	checkRows(t, "team", reps["team"], map[string]int64{"vision": 28312, "serving": 23868, "(none)": 28})
	o.TeamsFile = filepath.Join(t.TempDir(), "teams.yaml")
	if err := os.WriteFile(o.TeamsFile, []byte("cohort: c\nteams:\n- name: research\n  namespaces: [ml]\n  quotas: [{model: H100-80GB, nominal: 1}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	checkRows(t, "team with a teams file", decode(t, o), map[string]int64{"research": 28312, "serving": 23868, "(none)": 28})

	// Right-sizing by the owners' jobs: web/frontend held a whole H100 and
	// a replica of an L4, so it is not sized; ml/pretrain is train-1's
	// samples (as ml/llm in TestDayRightsizing).
	for _, x := range reps["job"].Rightsizing {
		switch x.Job {
		case "web/frontend":
			if x.Recommended != "" || x.Reason != "held different GPU models or shares: not sized" || x.CostUSD != "200.76" {
				t.Errorf("web/frontend: %+v", x)
			}
		case "ml/pretrain":
			if x.UtilSamples != 16 || x.PeakMiB == nil || *x.PeakMiB != 61440 || x.CostUSD != "221.20" {
				t.Errorf("ml/pretrain: %+v", x)
			}
		}
	}

	// Lookup failures: an error, nothing printed.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	down := filepath.Join(t.TempDir(), "kubeconfig")
	kc, err := os.ReadFile(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(down, []byte(strings.ReplaceAll(string(kc), strings.TrimPrefix(c.URL, "https://"), addr)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct{ file, want string }{{down, "owner lookup (--kubeconfig " + down + "): namespace ml"}, {filepath.Join(t.TempDir(), "none"), "kubeconfig"}} {
		o.Kubeconfig = k.file
		out, _, err := run(t, o)
		if err == nil || !strings.Contains(err.Error(), k.want) || out != "" {
			t.Errorf("kubeconfig %s: error %v, stdout %q; want an error containing %q and no output", k.file, err, out, k.want)
		}
	}
}

func decode(t *testing.T, o Options) Report {
	t.Helper()
	stdout, _, err := run(t, o)
	if err != nil {
		t.Fatalf("by %s: %v", o.By, err)
	}
	var r Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("by %s: %v", o.By, err)
	}
	return r
}

func checkRows(t *testing.T, what string, r Report, want map[string]int64) {
	t.Helper()
	if len(r.Rows) != len(want) {
		t.Errorf("%s: rows %+v, want %v", what, r.Rows, want)
	}
	for _, x := range r.Rows {
		if c, ok := want[x.Key]; !ok || cents(t, x.CostUSD) != c {
			t.Errorf("%s: %s costs %s, want %d c", what, x.Key, x.CostUSD, c)
		}
	}
}

func TestTeamLabelNeedsKubeconfig(t *testing.T) {
	out, _, err := run(t, Options{OpenMetrics: dayFile, TeamLabel: "gpuplane.io/team", By: "team", Format: "table"})
	if err == nil || !strings.Contains(err.Error(), "--team-label needs --kubeconfig") || out != "" {
		t.Errorf("error %v, stdout %q", err, out)
	}
}

// TestByTeamNeedsTeams: --by team without a teams file or a team label
// put every namespace in team "(none)", unsaid; now an error, nothing
// printed.
func TestByTeamNeedsTeams(t *testing.T) {
	out, _, err := run(t, Options{OpenMetrics: dayFile, By: "team", Format: "table"})
	if err == nil || !strings.Contains(err.Error(), "--by team needs --teams FILE or --kubeconfig with --team-label") || out != "" {
		t.Errorf("error %v, stdout %q", err, out)
	}
}
