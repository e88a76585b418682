package kube

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lbbench/lbbench/driver"
	"github.com/lbbench/lbbench/engines"
	"github.com/lbbench/lbbench/topologies"
)

// TestStage: the files come out with the pod's address in place of the
// placeholder, byte for byte otherwise (nginx's $variables and a "$$" the
// kubelet would have collapsed included), and the binary is copied
// executable. A name that leaves the directory is refused.
func TestStage(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "self")
	if err := os.WriteFile(self, []byte("\x7fELF binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := "upstream u { server " + PodIPPlaceholder + ":20001; }\nlog_format x '$upstream_addr $$ $(" + PodIPEnv + ")';\n"
	enc, err := EncodeStage([]topologies.File{{Name: "nginx.conf", Content: conf}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(enc, "$") {
		t.Fatalf("the encoded files hold a $ the kubelet would expand: %q", enc)
	}
	work := filepath.Join(dir, "work")
	os.Mkdir(work, 0o755)
	bin := filepath.Join(dir, "bin", "lbbench")
	if err := Stage(enc, "10.88.1.7", work, self, bin); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(work, "nginx.conf"))
	if want := strings.ReplaceAll(conf, PodIPPlaceholder, "10.88.1.7"); string(got) != want {
		t.Errorf("staged\n%s\nwant\n%s", got, want)
	}
	fi, err := os.Stat(bin)
	if err != nil || fi.Mode().Perm() != 0o755 || fi.Size() != int64(len("\x7fELF binary")) {
		t.Errorf("copied binary: %v %v", fi, err)
	}
	bad, _ := EncodeStage([]topologies.File{{Name: "../escape", Content: "x"}})
	if err := Stage(bad, "10.88.1.7", work, self, ""); err == nil {
		t.Error("a file outside the directory was written")
	}
	if err := Stage(enc, "", work, self, ""); err == nil || !strings.Contains(err.Error(), PodIPEnv) {
		t.Errorf("no pod address: %v", err)
	}
}

// TestEnginePod: an engine process becomes a staging init container of
// lbbench's image, a check of the engine's image, and the engine's
// container under the staged lbbench guard, all in its working directory.
func TestEnginePod(t *testing.T) {
	resolved := driver.NewEngineImages("kubernetes", map[string]string{"nginx": "reg/lbbench-nginx:1"}, noEngineImage,
		func(_ context.Context, engine, img string) (string, engines.Binary, error) {
			return img, engines.Binary{Engine: engine}, nil
		})
	if _, err := resolved.Find(context.Background(), "nginx"); err != nil {
		t.Fatal(err)
	}
	d := &Driver{cfg: config{CPUs: map[string]int{RoleServer: 2, RoleGenerator: 1}, MemoryMiB: 512}, session: "s1", owner: "h.1.2", engines: resolved}
	proc := topologies.Process{
		Role:   topologies.RoleProxy,
		Engine: &topologies.EngineCommand{Engine: "nginx", Path: "/usr/sbin/nginx", Args: []string{"-p", topologies.DirPlaceholder, "-c", topologies.DirPlaceholder + "/nginx.conf"}, Check: []string{"-t", "-c", topologies.DirPlaceholder + "/nginx.conf"}},
		Files:  []topologies.File{{Name: "nginx.conf", Content: "listen " + PodIPPlaceholder + ":20000; pid " + topologies.DirPlaceholder + "/nginx.pid;"}},
	}
	dep := &deployment{d: d, run: "001", image: "reg/lbbench:1", plan: topologies.Plan{ID: "001-x-r1", Processes: []topologies.Process{{Role: topologies.RoleWorkers}, proc}}}
	c, inits, vol, err := dep.engine(1, proc)
	if err != nil {
		t.Fatal(err)
	}
	if len(inits) != 2 || inits[0].Image != "reg/lbbench:1" || inits[1].Image != "reg/lbbench-nginx:1" {
		t.Fatalf("init containers %+v", inits)
	}
	if got := strings.Join(inits[1].Command, " ") + " " + strings.Join(inits[1].Args, " "); got != "/usr/sbin/nginx -t -c "+EngineWorkDir+"/nginx.conf" {
		t.Errorf("check %q", got)
	}
	if c.Name != "proxy-1" || c.Image != "reg/lbbench-nginx:1" || c.WorkingDir != EngineWorkDir {
		t.Errorf("engine container %s, image %s, in %s", c.Name, c.Image, c.WorkingDir)
	}
	if got := strings.Join(append(c.Command, c.Args...), " "); got != StagedBinary+" guard -- /usr/sbin/nginx -p "+EngineWorkDir+" -c "+EngineWorkDir+"/nginx.conf" {
		t.Errorf("engine command %q", got)
	}
	var staged string
	for _, e := range inits[0].Env {
		if e.Name == StageEnv {
			staged = e.Value
		}
	}
	out := t.TempDir()
	self := filepath.Join(out, "self")
	os.WriteFile(self, nil, 0o755)
	if err := Stage(staged, "10.0.0.9", out, self, ""); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "nginx.conf")); string(b) != "listen 10.0.0.9:20000; pid "+EngineWorkDir+"/nginx.pid;" {
		t.Errorf("staged configuration %q", b)
	}
	if vol.Name != "work-1" || vol.EmptyDir == nil {
		t.Errorf("working volume %+v", vol)
	}
	pod, err := dep.serverPod()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range pod.Spec.Volumes {
		names = append(names, v.Name)
	}
	if !slices.Equal(names, []string{tmpVolume, "work-1", binVolume}) {
		t.Errorf("volumes %v", names)
	}
	if len(pod.Spec.InitContainers) != 2 || len(pod.Spec.Containers) != 2 {
		t.Errorf("server pod: %d init containers, %d containers", len(pod.Spec.InitContainers), len(pod.Spec.Containers))
	}
	for _, m := range c.VolumeMounts {
		if m.Name == binVolume && !m.ReadOnly {
			t.Error("the engine's container can write lbbench's copy")
		}
	}
	d.engines = driver.NewEngineImages("kubernetes", nil, noEngineImage, nil) // nothing resolved
	if _, _, _, err := dep.engine(1, proc); err == nil || !strings.Contains(err.Error(), "--engine-image nginx=") {
		t.Errorf("no image: %v", err)
	}
}
