//go:build cgo

package prober

import (
	"log/slog"
)

// LogValue makes an Outcome log as a group with its result and reason names, message,
// duration and, when they apply, the HTTP status, the exit code, the output size and the
// certificate expiry (the output itself is left out).
func (o Outcome) LogValue() slog.Value {
	attrs := make([]slog.Attr, 0, 8)
	attrs = append(attrs,
		slog.String("result", o.Result.String()),
		slog.String("reason", o.Reason.String()),
		slog.String("message", o.Message),
		slog.Duration("duration", o.Duration))
	if o.HTTPStatus != 0 {
		attrs = append(attrs, slog.Int("http_status", o.HTTPStatus))
	}
	if o.ExitCode >= 0 {
		attrs = append(attrs, slog.Int("exit_code", o.ExitCode))
	}
	if o.OutputTotal > 0 {
		attrs = append(attrs, slog.Int64("output_bytes", o.OutputTotal))
	}
	if !o.CertNotAfter.IsZero() {
		attrs = append(attrs, slog.Time("cert_not_after", o.CertNotAfter))
	}
	return slog.GroupValue(attrs...)
}

// LogValue makes an Event log as a group: its kind, the target and role (state and run
// events) or the tag (check events), the result, the outcome (when there is one), how late a
// run started, and the error.
func (ev Event) LogValue() slog.Value {
	attrs := make([]slog.Attr, 0, 7)
	attrs = append(attrs, slog.String("kind", ev.Kind.String()))
	if ev.Kind == EventCheck {
		attrs = append(attrs, slog.Uint64("tag", ev.Tag))
	} else {
		attrs = append(attrs, slog.Uint64("target", uint64(ev.Target)),
			slog.String("role", ev.Role.String()))
	}
	attrs = append(attrs, slog.String("result", ev.Result.String()))
	if ev.HasOutcome {
		attrs = append(attrs, slog.Any("outcome", ev.Outcome))
	}
	if ev.Kind == EventRun {
		attrs = append(attrs, slog.Duration("late", ev.Late))
	}
	if ev.Err != nil {
		attrs = append(attrs, slog.String("error", ev.Err.Error()))
	}
	return slog.GroupValue(attrs...)
}
