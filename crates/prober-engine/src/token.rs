//! Poll tokens: which run, of which generation of its slot, and which of its descriptors.

use std::time::Instant;

use mio::{Poll, Token};
use prober_io::{Ctx, Mailbox, TOKENS_PER_PROBE};

use crate::arena::Key;

pub(crate) const WAKE: Token = Token(usize::MAX);

// Poll tokens: `generation | slot | sub`. The slot's generation is in the high bits so that
// readiness still queued for a run that has ended (a closed socket's last event, the
// disconnect of a socket that went back to the pool) is recognised as stale even when the
// slot index already serves another run; machines can then trust an event to be about their
// own socket. Generations are compared modulo 2^GEN_BITS: a stale event would have to wait
// through 2^30 reuses of one slot to be mistaken.
const SUB_BITS: u32 = TOKENS_PER_PROBE.trailing_zeros();
const SLOT_BITS: u32 = if usize::BITS >= 64 { 32 } else { 20 };
const GEN_BITS: u32 = usize::BITS - SUB_BITS - SLOT_BITS;
pub(crate) const GEN_MASK: usize = (1 << GEN_BITS) - 1;
const SLOT_MASK: usize = (1 << SLOT_BITS) - 1;
const _: () = assert!(TOKENS_PER_PROBE == 1 << SUB_BITS);

/// The first token of the run in `slot` (see [`prober_io::Ctx::token`]). Slot indexes stay
/// below `SLOT_MASK` (2^32 - 1 on 64-bit targets, 2^20 - 1 on 32-bit ones: more in-flight
/// probes than descriptors a process can hold), so no token is `WAKE`.
pub(crate) fn token_base(slot: Key) -> usize {
    debug_assert!((slot.index as usize) < SLOT_MASK);
    (slot.generation as usize & GEN_MASK) << (SLOT_BITS + SUB_BITS)
        | (slot.index as usize) << SUB_BITS
}

/// The context lent to the run in `slot`: its poll tokens ([`token_base`]) and its mailbox
/// ticket (the slot's key as a number, as `Engine::deliver_answers` reads it back).
pub(crate) fn run_ctx<'a>(
    poll: &'a Poll,
    mailbox: &'a Mailbox,
    now: Instant,
    slot: Key,
) -> Ctx<'a> {
    Ctx::new(poll.registry(), now, token_base(slot), mailbox, slot.to_u64())
}

/// The token of the engine's `index`-th shared ICMP socket: a slot index no run has
/// (`SLOT_MASK`), the socket's index where a run's token has its generation.
pub(crate) fn shared_token(index: usize) -> Token {
    debug_assert!(index < GEN_MASK, "no more shared sockets than generations");
    Token((index & GEN_MASK) << (SLOT_BITS + SUB_BITS) | SLOT_MASK << SUB_BITS)
}

/// The shared socket a token made by [`shared_token`] names.
pub(crate) fn shared_index(token: Token) -> Option<usize> {
    let (slot, index, sub) = split_token(token);
    (token != WAKE && slot as usize == SLOT_MASK && sub == 0).then_some(index)
}

/// The token of the kept connection with descriptor `fd` (`prober_transport::keep`): a slot
/// index no run has (`SLOT_MASK`), sub-token 1 (the shared sockets' is 0; `WAKE` and `TIMER`
/// have 3 and 2), the descriptor where a run's token has its generation. `None` for a
/// descriptor beyond that field (only on 32-bit targets: 2^10), whose connection then goes
/// under each run's token.
pub(crate) fn kept_token(fd: usize) -> Option<Token> {
    (fd < GEN_MASK).then_some(Token(fd << (SLOT_BITS + SUB_BITS) | SLOT_MASK << SUB_BITS | 1))
}

/// The descriptor of the kept connection a token made by [`kept_token`] names.
pub(crate) fn kept_fd(token: Token) -> Option<usize> {
    let (slot, fd, sub) = split_token(token);
    (token != WAKE && slot as usize == SLOT_MASK && sub == 1).then_some(fd)
}

/// `(slot, generation modulo 2^GEN_BITS, sub)` of a token made by [`token_base`].
pub(crate) fn split_token(token: Token) -> (u32, usize, usize) {
    let t = token.0;
    (((t >> SUB_BITS) & SLOT_MASK) as u32, t >> (SLOT_BITS + SUB_BITS), t & (TOKENS_PER_PROBE - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_carry_slot_generation_and_sub() {
        for (index, generation) in [(0, 1), (1, 2), (7, 12345), (u32::MAX >> 12, u32::MAX)] {
            for sub in 0..TOKENS_PER_PROBE {
                let t = Token(token_base(Key { index, generation }) + sub);
                assert_ne!(t, WAKE);
                assert_eq!(split_token(t), (index, generation as usize & GEN_MASK, sub));
            }
        }
        // The same slot in its next generation gets other tokens: events left for the old run
        // cannot reach the new one.
        let key = |index, generation| Key { index, generation };
        assert_ne!(token_base(key(3, 8)), token_base(key(3, 9)));
        assert_ne!(token_base(key(3, GEN_MASK as u32)), token_base(key(3, GEN_MASK as u32 + 1)));
    }

    #[test]
    fn shared_socket_tokens_are_no_run_s() {
        for index in [0, 1, 1000, GEN_MASK - 1] {
            let t = shared_token(index);
            assert_ne!(t, WAKE);
            assert_eq!(shared_index(t), Some(index));
        }
        assert_eq!(shared_index(WAKE), None);
        for fd in [0, 3, 1000, GEN_MASK - 1] {
            let t = kept_token(fd).unwrap();
            assert!(t != WAKE && t != crate::wake_timer::TIMER && shared_index(t).is_none());
            assert_eq!(kept_fd(t), Some(fd));
            assert_ne!(kept_token(fd), Some(shared_token(fd)));
        }
        assert_eq!(kept_token(GEN_MASK), None);
        assert_eq!(kept_fd(WAKE), None);
        assert_eq!(kept_fd(crate::wake_timer::TIMER), None);
        assert_eq!(kept_fd(shared_token(3)), None);
        assert_eq!(kept_fd(Token(token_base(Key { index: 5, generation: 7 }) + 1)), None);
        assert_eq!(shared_index(Token(token_base(Key { index: 5, generation: 7 }))), None);
    }
}
