package owners

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestNewMissingKubeconfig(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nope.yaml")
	_, err := New(p, "")
	if err == nil || !strings.Contains(err.Error(), "kubeconfig \""+p+"\"") {
		t.Errorf("error %v, want one naming the kubeconfig file", err)
	}
}
