package csvcell

import "testing"

func TestCell(t *testing.T) {
	for in, want := range map[string]string{
		"=HYPERLINK(\"http://x\",\"y\")": "'=HYPERLINK(\"http://x\",\"y\")",
		"+cmd|' /C calc'!A0":             "'+cmd|' /C calc'!A0",
		"-2+3+cmd|' /C calc'!A0":         "'-2+3+cmd|' /C calc'!A0",
		"@SUM(1+1)":                      "'@SUM(1+1)",
		"\t=1+1":                         "'\t=1+1",
		"\r=1+1":                         "'\r=1+1",
		"-inf":                           "'-inf",
		"-":                              "'-",
		"-1.5":                           "-1.5",
		"+3":                             "+3",
		"-0.001":                         "-0.001",
		"1e-3":                           "1e-3",
		"-2.5E+10":                       "-2.5E+10",
		".5":                             ".5",
		"least_conn":                     "least_conn",
		"a=b":                            "a=b",
		"":                               "",
		"inf":                            "inf",
		"-1.5.2":                         "'-1.5.2",
		"-1e":                            "'-1e",
	} {
		if got := Cell(in); got != want {
			t.Errorf("Cell(%q) = %q, want %q", in, got, want)
		}
	}
}
