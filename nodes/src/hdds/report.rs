//! Container states, the reports a datanode sends, and the wire messages.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// A replica's state as a datanode reports it. `Deleted` appears only in an ICR
/// (a container set never holds it: a deleted container is absent).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ContainerState {
    Open,
    Closed,
    Unhealthy,
    Deleted,
}

impl ContainerState {
    pub fn name(self) -> &'static str {
        match self {
            ContainerState::Open => "OPEN",
            ContainerState::Closed => "CLOSED",
            ContainerState::Unhealthy => "UNHEALTHY",
            ContainerState::Deleted => "DELETED",
        }
    }
}

impl fmt::Display for ContainerState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An incremental container report: one container's new state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Icr {
    pub container: u64,
    pub state: ContainerState,
    /// Ghost field (not in Ozone's message): when the datanode made this report,
    /// in its [`Generation`] order. Only the receivers' ordering check reads it.
    #[serde(default)]
    pub generation: Generation,
}

/// The order in which one datanode made its reports: (incarnation, count). A
/// ghost value, like a model checker's history variable: Ozone's reports carry
/// no such number, and nothing but the `receiver_never_regresses` check reads it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Generation {
    pub incarnation: u32,
    pub count: u64,
}

/// A command status report: the datanode executed SCM's deleteBlocks command
/// `command` (status EXECUTED), acknowledging the transactions `txs`
/// (`ContainerBlocksDeletionACKProto`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Csr {
    pub command: u64,
    pub txs: Vec<u64>,
}

/// SCM's deleteBlocks command: delete the blocks of these deleted-block
/// transactions. It reaches the datanode in a heartbeat response.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeleteBlocksCommand {
    pub id: u64,
    pub txs: Vec<u64>,
}

/// What the incremental report queue of `StateContext` holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Report {
    Icr(Icr),
    Csr(Csr),
}

/// A full container report: a snapshot of the container set. `id` numbers the
/// builds of one datanode incarnation (for the trail only).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fcr {
    pub id: u64,
    pub containers: BTreeMap<u64, ContainerState>,
    /// Ghost field: when the datanode took this snapshot (see [`Generation`]).
    #[serde(default)]
    pub generation: Generation,
}

/// The reports one heartbeat carries, in the heartbeat message's field order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reports {
    pub fcr: Option<Fcr>,
    pub icrs: Vec<Icr>,
    pub csrs: Vec<Csr>,
}

impl Reports {
    pub fn is_empty(&self) -> bool {
        self.fcr.is_none() && self.icrs.is_empty() && self.csrs.is_empty()
    }
}

/// The two kinds of receivers a datanode reports to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Endpoint {
    Scm,
    Recon,
}

impl Endpoint {
    pub const ALL: [Endpoint; 2] = [Endpoint::Scm, Endpoint::Recon];

    /// The node role of this receiver, also its name in facts and the trail.
    pub fn role(self) -> &'static str {
        match self {
            Endpoint::Scm => "scm",
            Endpoint::Recon => "recon",
        }
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.role())
    }
}

/// Datanode <-> SCM/Recon messages. `call` pairs a reply with its request.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Message {
    /// Register (and re-register) with a fresh full container report.
    Register {
        call: u64,
        fcr: Fcr,
    },
    RegisterAck {
        call: u64,
    },
    Heartbeat {
        call: u64,
        reports: Reports,
    },
    /// `reregister`: the receiver asks the datanode to register again.
    /// `commands`: SCM's queued deleteBlocks commands for this datanode.
    HeartbeatAck {
        call: u64,
        reregister: bool,
        commands: Vec<DeleteBlocksCommand>,
    },
}

// ---- text for the trail ----

pub fn show_icrs(icrs: &[Icr]) -> String {
    let items: Vec<String> = icrs
        .iter()
        .map(|i| format!("C{}={}", i.container, i.state))
        .collect();
    format!("[{}]", items.join(", "))
}

pub fn show_csrs(csrs: &[Csr]) -> String {
    let items: Vec<String> = csrs.iter().map(|c| format!("cmd{}", c.command)).collect();
    format!("[{}]", items.join(", "))
}

pub fn show_txs(txs: &[u64]) -> String {
    let items: Vec<String> = txs.iter().map(|t| format!("tx{t}")).collect();
    format!("[{}]", items.join(", "))
}

pub fn show_containers(containers: &BTreeMap<u64, ContainerState>) -> String {
    let items: Vec<String> = containers
        .iter()
        .map(|(c, s)| format!("C{c}={s}"))
        .collect();
    format!("[{}]", items.join(", "))
}

pub fn show_fcr(fcr: &Fcr) -> String {
    format!("FCR#{} {}", fcr.id, show_containers(&fcr.containers))
}

pub fn show_reports(reports: &Reports) -> String {
    let fcr = match &reports.fcr {
        Some(fcr) => show_fcr(fcr),
        None => "no FCR".to_string(),
    };
    format!(
        "{fcr}, ICRs {}, CSRs {}",
        show_icrs(&reports.icrs),
        show_csrs(&reports.csrs)
    )
}

/// The state key of one replica: `dn1/C7`, the same on the datanode and receivers.
pub fn replica_key(datanode: &str, container: u64) -> String {
    format!("{datanode}/C{container}")
}

/// A container set as one fact (`C1=CLOSED,C2=OPEN`): the datanode's set and each
/// receiver's view of it, compared by `receiver_matches_datanode`.
pub fn containers_fact(containers: &BTreeMap<u64, ContainerState>) -> String {
    containers
        .iter()
        .map(|(c, s)| format!("C{c}={s}"))
        .collect::<Vec<_>>()
        .join(",")
}

pub fn containers_from_fact(text: &str) -> BTreeMap<u64, ContainerState> {
    text.split(',')
        .filter_map(|item| {
            let (id, state) = item.strip_prefix('C')?.split_once('=')?;
            let state = [
                ContainerState::Open,
                ContainerState::Closed,
                ContainerState::Unhealthy,
            ]
            .into_iter()
            .find(|s| s.name() == state)?;
            Some((id.parse().ok()?, state))
        })
        .collect()
}
