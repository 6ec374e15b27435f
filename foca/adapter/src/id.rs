//! What foca is generic over, for this model: the identity of a member, the
//! runtime that collects foca's effects, and the seeded RNG. The few API
//! differences between foca releases live here, behind the `foca2` feature.

use foca::{Identity, Timer};
use rand::RngCore as _;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A member: the node (its index in the scenario, which names its address),
/// the start of the node it belongs to, and a bump foca renews on rejoin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Id {
    pub node: u8,
    pub start: u16,
    pub bump: u16,
}

impl Id {
    /// `n1:0.2`: node n1, first start, renewed twice.
    pub fn show(&self, names: &[String]) -> String {
        let name = names
            .get(usize::from(self.node))
            .map_or("?", String::as_str);
        format!("{name}:{}.{}", self.start, self.bump)
    }
}

impl Identity for Id {
    /// A member declared Down rejoins under a new identity (foca's
    /// `attempt_rejoin`): the same node and start, the next bump.
    fn renew(&self) -> Option<Self> {
        Some(Id {
            bump: self.bump.wrapping_add(1),
            ..*self
        })
    }

    #[cfg(not(feature = "foca2"))]
    fn has_same_prefix(&self, other: &Self) -> bool {
        self.node == other.node
    }

    #[cfg(feature = "foca2")]
    type Addr = u8;

    #[cfg(feature = "foca2")]
    fn addr(&self) -> u8 {
        self.node
    }

    #[cfg(feature = "foca2")]
    fn win_addr_conflict(&self, adversary: &Self) -> bool {
        (self.start, self.bump) > (adversary.start, adversary.bump)
    }
}

/// What foca told the node, reduced to what the model acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notice {
    Up(Id),
    Down(Id),
    Rejoin(Id),
    /// foca 0.17 on: a member's identity replaced one with the same address.
    #[cfg(feature = "foca2")]
    Rename(Id, Id),
    Idle,
    Other,
}

/// foca's runtime: it collects what one call into foca asked for; the node
/// carries it out afterwards (sends through the `send` fail point, timers on
/// simulated time).
#[derive(Default)]
pub struct Effects {
    pub sends: Vec<(Id, Vec<u8>)>,
    pub timers: Vec<(Timer<Id>, Duration)>,
    pub notices: Vec<Notice>,
}

impl foca::Runtime<Id> for Effects {
    #[cfg(not(feature = "foca2"))]
    #[expect(
        clippy::wildcard_enum_match_arm,
        reason = "foca's notifications grow by release; the rest are not acted on"
    )]
    fn notify(&mut self, notification: foca::Notification<Id>) {
        use foca::Notification as N;
        self.notices.push(match notification {
            N::MemberUp(id) => Notice::Up(id),
            N::MemberDown(id) => Notice::Down(id),
            N::Rejoin(id) => Notice::Rejoin(id),
            N::Idle => Notice::Idle,
            _ => Notice::Other,
        });
    }

    #[cfg(feature = "foca2")]
    #[expect(
        clippy::wildcard_enum_match_arm,
        reason = "foca's notifications grow by release; the rest are not acted on"
    )]
    fn notify(&mut self, notification: foca::Notification<'_, Id>) {
        use foca::Notification as N;
        self.notices.push(match notification {
            N::MemberUp(id) => Notice::Up(*id),
            N::MemberDown(id) => Notice::Down(*id),
            N::Rejoin(id) => Notice::Rejoin(*id),
            N::Rename(old, new) => Notice::Rename(*old, *new),
            N::Idle => Notice::Idle,
            _ => Notice::Other,
        });
    }

    fn send_to(&mut self, to: Id, data: &[u8]) {
        self.sends.push((to, data.to_vec()));
    }

    fn submit_after(&mut self, event: Timer<Id>, after: Duration) {
        self.timers.push((event, after));
    }
}

/// foca's RNG (member choice, probe order), drawn from the node's seed stream.
pub struct SeededRng(pub ChaCha8Rng);

#[cfg(not(feature = "foca2"))]
impl rand_core::RngCore for SeededRng {
    fn next_u32(&mut self) -> u32 {
        self.0.next_u32()
    }
    fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        self.0.fill_bytes(dest);
    }
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        self.0.fill_bytes(dest);
        Ok(())
    }
}

#[cfg(feature = "foca2")]
impl rand_core_010::TryRng for SeededRng {
    type Error = std::convert::Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Ok(self.0.next_u32())
    }
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        Ok(self.0.next_u64())
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        self.0.fill_bytes(dst);
        Ok(())
    }
}

/// foca's configuration for this run.
pub fn config(p: &crate::Params) -> foca::Config {
    use std::num::NonZeroUsize;
    let mut config = foca::Config::simple();
    config.probe_period = Duration::from_millis(p.probe_period_ms());
    config.probe_rtt = Duration::from_millis(p.probe_rtt_ms());
    config.suspect_to_down_after = Duration::from_millis(p.suspect_to_down_ms());
    config.notify_down_members = p.notify_down_members.unwrap_or(true);
    config.periodic_gossip = Some(foca::PeriodicParams {
        frequency: Duration::from_millis(p.gossip_ms()),
        num_members: NonZeroUsize::new(3).expect("3 is not zero"),
    });
    // foca's default (24 h): down members are never forgotten within a run.
    #[cfg(feature = "foca2")]
    {
        config.remove_down_after = Some(Duration::from_secs(24 * 3600));
    }
    config
}
