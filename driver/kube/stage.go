package kube

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/lbbench/lbbench/internal/safepath"
	"github.com/lbbench/lbbench/topologies"
)

// A proxy engine's container runs the engine's image, which has neither
// lbbench nor the engine's configuration. An init container of lbbench's
// image stages both in volumes the pod's containers share ("lbbench
// stage"): a copy of the static binary, which runs lbbench guard around
// the engine and lbbench engine-stats beside it, and the configuration
// files with the pod's address in place of PodIPPlaceholder (the kubelet
// expands variables in arguments, not in files). No ConfigMap is made: the
// files travel in the init container's environment.
const (
	// StageSubcommand is the hidden lbbench subcommand of the init
	// container.
	StageSubcommand = "stage"
	// StageEnv holds the files to write: base64 of a JSON []topologies.File
	// (base64, so that the kubelet's $(VAR) expansion leaves them alone).
	StageEnv = "LBBENCH_STAGE"
	// FlagStageDir and FlagStageBinary are the working directory the files
	// go to and where the binary is copied.
	FlagStageDir    = "dir"
	FlagStageBinary = "binary"

	// EngineWorkDir is an engine's working directory in its container
	// (the plan's DirPlaceholder), a volume of the pod.
	EngineWorkDir = "/work"
	// StagedBinary is lbbench's copy in an engine's container.
	StagedBinary = "/lbbench-bin/lbbench"
)

// EncodeStage is StageEnv's value for files.
func EncodeStage(files []topologies.File) (string, error) {
	b, err := json.Marshal(files)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// Stage is what "lbbench stage" does: it writes the files encoded in
// encoded (StageEnv) into dir, with podIP in place of PodIPPlaceholder,
// and copies the running binary, self, to binary.
func Stage(encoded, podIP, dir, self, binary string) error {
	raw, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return fmt.Errorf("stage: %s: %w", StageEnv, err)
	}
	var fs []topologies.File
	if err := json.Unmarshal(raw, &fs); err != nil {
		return fmt.Errorf("stage: %s: %w", StageEnv, err)
	}
	if len(fs) > 0 && podIP == "" {
		return fmt.Errorf("stage: %s is not set", PodIPEnv)
	}
	for _, f := range fs {
		path, err := safepath.Join(dir, f.Name)
		if err != nil {
			return fmt.Errorf("stage: %w", err)
		}
		if err := os.WriteFile(path, []byte(strings.ReplaceAll(f.Content, PodIPPlaceholder, podIP)), 0o644); err != nil {
			return fmt.Errorf("stage: %w", err)
		}
	}
	if binary == "" {
		return nil
	}
	in, err := os.Open(self)
	if err != nil {
		return fmt.Errorf("stage: %w", err)
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(binary), 0o755); err != nil {
		return fmt.Errorf("stage: %w", err)
	}
	out, err := os.OpenFile(binary, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return fmt.Errorf("stage: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("stage: copy %s to %s: %w", self, binary, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("stage: %w", err)
	}
	return nil
}
