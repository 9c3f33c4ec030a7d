//! A self-contained tour of the engine: starts its own target server on loopback, probes it
//! with startup, readiness and liveness workers, flips its health, and prints every published
//! state change as it happens. No setup needed:
//!
//! ```text
//! cargo run -p prober --example demo
//! ```

use std::time::{Duration, Instant};

use prober::{Engine, Event, ProbeSpec, Role, Schedule};
use prober_testkit::TargetServer;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = TargetServer::start();
    println!("target server on {}; probing /health every 200 ms", server.addr());
    let mut engine = Engine::new()?;
    let target = engine.add_target();
    let every = |failure| Schedule {
        period: Duration::from_millis(200),
        failure_threshold: failure,
        ..Schedule::default()
    };
    let health = ProbeSpec::http(&server.url("/health"))?;
    engine.set_probe(target, Role::Startup, health.clone(), every(3))?;
    engine.set_probe(target, Role::Readiness, health.clone(), every(2))?;
    engine.set_probe(
        target,
        Role::Liveness,
        ProbeSpec::tcp("127.0.0.1", server.port().into())?,
        every(3),
    )?;

    let start = Instant::now();
    let mut flipped_down = false;
    let mut flipped_up = false;
    while start.elapsed() < Duration::from_secs(4) {
        engine.wait(Some(Duration::from_millis(50)))?;
        if !flipped_down && start.elapsed() > Duration::from_millis(1500) {
            println!(
                "{:>6} ms  -- target server now answers 503 on /health",
                start.elapsed().as_millis()
            );
            server.set_healthy(false);
            flipped_down = true;
        }
        if !flipped_up && start.elapsed() > Duration::from_millis(2800) {
            println!("{:>6} ms  -- target server healthy again", start.elapsed().as_millis());
            server.set_healthy(true);
            flipped_up = true;
        }
        while let Some(event) = engine.next_event() {
            if let Event::State { role, result, outcome, .. } = event {
                let why = outcome.map(|o| {
                    // A success has no message and no reason worth printing: say how long it took.
                    if o.message.is_empty() {
                        format!(" (took {:.2} ms)", o.timings.total.as_secs_f64() * 1000.0)
                    } else {
                        format!(" ({}: {})", o.reason, o.message)
                    }
                });
                println!(
                    "{:>6} ms  {role:<9} -> {result}{}",
                    start.elapsed().as_millis(),
                    why.unwrap_or_else(|| " (initial value)".into())
                );
            }
        }
    }
    Ok(())
}
