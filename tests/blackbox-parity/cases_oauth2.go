package main

// http.oauth2 (prometheus/common's client credentials): blackbox_exporter's tests have no
// case of it, so these are ours, run the same way: an authorization server and the resource
// it protects, on loopback, and what each exporter asks of them.

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
)

const (
	oauthID     = "probe client"
	oauthSecret = "s3cr:t/&"
	oauthToken  = "tok-16180339"
)

// oauthModule is an http module with oauth2, its secret given by secretLine.
func oauthModule(secretLine string) string {
	return httpModule("preferred_ip_protocol: ip4\noauth2:\n  client_id: " + fmt.Sprintf("%q", oauthID) +
		"\n  " + secretLine + "\n  token_url: \"{{TOKEN_URL}}\"\n  scopes: [read, write]\n  endpoint_params:\n    audience: probes")
}

// oauthServer serves /token (granting oauthToken to oauthID with oauthSecret, from Basic
// credentials unless formOnly, or from the form) and /protected (200 with that token, else
// 401), noting each request; it sets TOKEN_URL and returns the protected URL.
func oauthServer(env *caseEnv, formOnly bool) string {
	mux := http.NewServeMux()
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		id, secret, basic := r.BasicAuth()
		where := "form"
		if basic {
			where = "header"
			id, _ = url.QueryUnescape(id)
			secret, _ = url.QueryUnescape(secret)
		} else {
			id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
		env.note("token %s %s grant_type=%q scope=%q audience=%q credentials in %s",
			r.Method, r.Header.Get("Content-Type"), r.PostForm.Get("grant_type"),
			r.PostForm.Get("scope"), r.PostForm.Get("audience"), where)
		w.Header().Set("Content-Type", "application/json")
		if (basic && formOnly) || id != oauthID || secret != oauthSecret {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":"invalid_client"}`)
			return
		}
		io.WriteString(w, `{"access_token":"`+oauthToken+`","token_type":"bearer","expires_in":3600}`)
	})
	mux.HandleFunc("/protected", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+oauthToken {
			env.note("protected: unauthorized")
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		env.note("protected: authorized")
	})
	ts := httptest.NewServer(mux)
	env.onClose(ts.Close)
	env.set("TOKEN_URL", ts.URL+"/token")
	return ts.URL + "/protected"
}

func init() {
	secret := "client_secret: " + fmt.Sprintf("%q", oauthSecret)
	add(tcase{
		name:    "oauth2/granted",
		module:  oauthModule(secret),
		setup:   func(env *caseEnv) string { return oauthServer(env, false) },
		metrics: []string{"probe_http_status_code"},
	})
	add(tcase{
		name:    "oauth2/credentials-in-the-form-after-a-refusal",
		module:  oauthModule(secret),
		setup:   func(env *caseEnv) string { return oauthServer(env, true) },
		metrics: []string{"probe_http_status_code"},
	})
	add(tcase{
		name:    "oauth2/wrong-secret",
		module:  oauthModule("client_secret: not-it"),
		setup:   func(env *caseEnv) string { return oauthServer(env, false) },
		metrics: []string{"probe_http_status_code"},
	})
	add(tcase{
		name:   "oauth2/token-endpoint-down",
		module: oauthModule(secret),
		setup: func(env *caseEnv) string {
			target := oauthServer(env, false)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				panic(err)
			}
			closed := ln.Addr().String()
			ln.Close()
			env.set("TOKEN_URL", "http://"+closed+"/token")
			return target
		},
		metrics: []string{"probe_http_status_code"},
	})
	add(tcase{
		name:    "oauth2/client-secret-file",
		module:  oauthModule("client_secret_file: {{DIR}}/secret.txt"),
		files:   map[string]string{"secret.txt": oauthSecret + "\n"},
		setup:   func(env *caseEnv) string { return oauthServer(env, false) },
		metrics: []string{"probe_http_status_code"},
	})
	add(tcase{
		name:   "oauth2/debug-shows-no-secret",
		module: oauthModule(secret),
		setup:  func(env *caseEnv) string { return oauthServer(env, false) },
		params: url.Values{"debug": {"true"}},
		inspect: func(status int, body string) string {
			return fmt.Sprintf("status %d, secret shown %v, token shown %v, success shown %v", status,
				strings.Contains(body, oauthSecret), strings.Contains(body, oauthToken),
				strings.Contains(body, "probe_success 1"))
		},
	})
}
