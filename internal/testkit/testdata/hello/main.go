// Command hello is the program TestBuildStatic builds.
package main

import "fmt"

func main() { fmt.Println("hello") }
