// Package csvcell makes text safe to put in a CSV cell that a spreadsheet
// will open: a cell beginning with '=', '+', '-', '@', a tab or a carriage
// return is read as a formula by Excel, LibreOffice and Google Sheets
// ("CSV injection"), so, as OWASP recommends, such a cell gets a leading
// single quote, which those tools show as text. Numbers ("-1.5", "+3",
// "1e-3") are left alone, so they stay numbers.
package csvcell

// Cell returns s escaped for a spreadsheet.
func Cell(s string) string {
	if s == "" || isNumber(s) {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}

// Row escapes every cell of row in place and returns it.
func Row(row []string) []string {
	for i, c := range row {
		row[i] = Cell(c)
	}
	return row
}

// isNumber reports whether s is a plain decimal number: an optional sign,
// digits with at most one '.', and an optional exponent. "inf" and "NaN"
// are not numbers here: a spreadsheet does not read them as such.
func isNumber(s string) bool {
	i := 0
	if s[0] == '+' || s[0] == '-' {
		i++
	}
	digits, dot := 0, false
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			goto exp
		}
	}
exp:
	if digits == 0 {
		return false
	}
	if i == len(s) {
		return true
	}
	if s[i] != 'e' && s[i] != 'E' {
		return false
	}
	i++
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if i == len(s) {
		return false
	}
	for ; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
