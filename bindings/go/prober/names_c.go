package prober

// #include "shim.h"
import "C"

// The library's own names, read through cgo (which test files cannot use): the tests check
// the String tables of this package against them, so that Go prints the names the C API and
// the prober command print.

// cResultName is prober_result_name(v): "invalid result" for a number the library does not
// define.
func cResultName(v uint32) string { return C.GoString(C.prober_result_name(C.uint32_t(v))) }

// cReasonName is prober_reason_name(v): "invalid reason" for a number the library does not
// define.
func cReasonName(v uint32) string { return C.GoString(C.prober_reason_name(C.uint32_t(v))) }
