module github.com/libprober/prober/tests/blackbox-parity

go 1.26.0

require github.com/andybalholm/brotli v1.2.0
