package testkit

import (
	"bytes"
	"os"
	"strconv"
)

// Environ is the environment process pid started with (/proc/PID/environ),
// nil when it cannot be read (another user's process, or gone meanwhile).
func Environ(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return nil
	}
	var env []string
	for _, kv := range bytes.Split(b, []byte{0}) {
		if len(kv) > 0 {
			env = append(env, string(kv))
		}
	}
	return env
}

// Getenv is the value of key in env ("" when absent), the last one winning
// as in exec.Cmd.Env.
func Getenv(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if len(kv) > len(key) && kv[len(key)] == '=' && kv[:len(key)] == key {
			v = kv[len(key)+1:]
		}
	}
	return v
}
