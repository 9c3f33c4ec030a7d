package main

// The cases of blackbox_exporter's config/config_test.go: its testdata files, each given as the
// module file as it is (read from blackbox_exporter's module, -upstream); compared is whether
// each exporter loads it. Both refusing is agreement whatever each one's reason (a file with a
// dns or icmp module, say, is refused by prober serve for that module).

var upstreamDir string // the blackbox_exporter module's directory (-upstream)

func init() {
	add(tcase{name: "config/TestLoadConfig/blackbox-good.yml", configFile: "config/testdata/blackbox-good.yml"})
	for _, f := range []string{
		"blackbox-bad.yml",
		"blackbox-bad2.yml",
		"invalid-dns-module.yml",
		"invalid-dns-class.yml",
		"invalid-dns-type.yml",
		"invalid-http-header-match.yml",
		"invalid-http-body-match-regexp.yml",
		"invalid-http-body-not-match-regexp.yml",
		"invalid-http-header-match-regexp.yml",
		"invalid-http-compression-mismatch.yml",
		"invalid-http-compression-mismatch-special-case.yml",
		"invalid-http-request-compression-reject-all-encodings.yml",
		"invalid-http-http3-http2.yml",
		"invalid-no-versions-http3-enabled.yml",
		"invalid-http-http3-http2-version.yml",
		"invalid-http-http3-http2-enabled.yml",
		"invalid-icmp-ttl.yml",
		"invalid-icmp-ttl-overflow.yml",
		"invalid-tcp-query-response-regexp.yml",
		"invalid-unix-query-response-regexp.yml",
		"invalid-http-body-config.yml",
	} {
		add(tcase{name: "config/TestLoadBadConfigs/" + f, configFile: "config/testdata/" + f})
	}
}
