//! Replies that are not the run's own are ignored: a forger beside the probe (as another
//! prober or a `ping` with the same id would be) answers every echo request it sees on
//! 127.0.0.1 with a reply of the same id and sequence, in a namespace of the test's own where
//! the kernel answers none (`icmp_echo_ignore_all`). With the request's data copied the probe
//! takes the reply (so the forger works); with other data it does not, and times out. Needs
//! root and iproute2, as CI has: without them these tests fail, saying so.

mod common;

use std::time::Duration;

use common::*;
use prober_core::{ProbeResult, Reason};
use prober_icmp::IcmpSocket;
use prober_testkit::echo_forger::EchoForger;
use prober_testkit::netns::TestNetns;

fn with_forger(copy_data: bool, unprivileged: bool) -> (prober_core::Outcome, u32) {
    let ns = TestNetns::new("icmp-beside");
    ns.run_in(move || {
        sysctl("net/ipv4/icmp_echo_ignore_all", "1");
        ping_group_range(unprivileged);
        let forger = EchoForger::start(copy_data);
        let (o, _) = ping(&spec("127.0.0.1", IcmpSocket::Auto), Duration::from_millis(500));
        (o, forger.stop())
    })
}

#[test]
fn a_reply_with_our_id_and_sequence_but_other_data_is_not_ours() {
    for unprivileged in [true, false] {
        let (o, forged) = with_forger(true, unprivileged);
        assert_eq!(o.result, ProbeResult::Success, "the forger's copy is taken: {o:?}");
        assert!(forged >= 1);
        let (o, forged) = with_forger(false, unprivileged);
        assert!(forged >= 1, "the forger answered");
        assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout), "{o:?}");
    }
}
