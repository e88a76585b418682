package field

import (
	"fmt"
	"math"
	"reflect"
	"strings"
)

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Finite reports the first NaN or infinite float reachable from v
// (structs, pointers, slices, maps), named by its YAML path under prefix.
// It covers values that did not come from YAML: JSON workloads and
// command-line overrides.
func Finite(v any, prefix string) error {
	return checkFinite(reflect.ValueOf(v), prefix)
}

func checkFinite(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return checkFinite(v.Elem(), path)
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return &Error{Field: path, Msg: fmt.Sprintf("must be a finite number, got %g", f)}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			sub := path
			if !strings.Contains(opts, "inline") {
				if name == "" || name == "-" {
					name = strings.ToLower(f.Name)
				}
				sub = join(path, name)
			}
			if err := checkFinite(v.Field(i), sub); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if err := checkFinite(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if err := checkFinite(it.Value(), join(path, fmt.Sprint(it.Key().Interface()))); err != nil {
				return err
			}
		}
	}
	return nil
}
