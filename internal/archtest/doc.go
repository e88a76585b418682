// Package archtest holds no code: its test checks lbbench's import rules
// (README, "Layout"), so that the layers stay as they are drawn.
package archtest
