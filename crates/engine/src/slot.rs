//! One benchmark client as the engine core sees it: its position in the script, its timing
//! marks, the result collector of the command in flight and the bytes it wants sent. The
//! socket itself belongs to the driver (`worker.rs`); the core only knows whether there is
//! one (`connected`).

use bytes::BytesMut;
use hotbench_script::Client as Interp;

use crate::backoff::Jitter;
use crate::collect::Collector;

/// Where a client is in pgbench's state machine (`CSTATE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Pick the next script (and its schedule under -R).
    ChooseScript,
    /// Waiting for the scheduled start under -R (`wake_at`).
    Throttle,
    /// The transaction starts now.
    StartTx,
    /// Ready to run command `cmd`.
    Command,
    /// Waiting for the command's results.
    WaitResult,
    /// Waiting for the result of the ROLLBACK sent after an error.
    WaitRollback,
    /// Sleeping until `wake_at`, then continuing with `resume`.
    Sleep,
    /// Connection lost: reconnect at `wake_at`.
    Reconnect,
    Finished,
    Aborted,
}

/// What to do when a sleep ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    /// Continue with command `cmd`.
    Command,
    /// Process the result that arrived (the emulated round trip ended).
    Result,
    /// Process the ROLLBACK's result.
    Rollback,
}

/// How a finished transaction ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Committed,
    Failed(hotbench_stats::FailureKind),
}

pub struct Slot {
    /// Global client id (`client_id`).
    pub id: usize,
    pub group: usize,
    /// The driver holds an open connection for this client. The core clears it to ask for
    /// the connection to be closed; the driver sets it (via `Core::on_connected`).
    pub connected: bool,
    /// The host (index in the target) its current or last connection went to.
    pub host: Option<usize>,
    /// This client's commits, failures and latency (fairness across clients).
    pub fair: hotbench_stats::fairness::ClientTally,
    /// SQLSTATE of the last server error (names a failed transaction's cause per key).
    pub last_error: Option<hotbench_wire::SqlState>,
    /// Messages encoded but not yet handed to the connection (`Action::Send`).
    pub out: BytesMut,
    pub phase: Phase,
    pub resume: Resume,
    pub wake_at: i64,
    pub interp: Interp,
    pub script: usize,
    pub cmd: usize,
    /// Scheduled start (= actual start when not throttled), µs.
    pub txn_scheduled: i64,
    pub txn_begin: i64,
    pub cmd_start: i64,
    /// Try number of the current transaction (1-based).
    pub tries: u32,
    pub retried: bool,
    /// Transactions finished (committed, failed or skipped), for -t.
    pub txns_done: u64,
    /// `prepared[script][cmd]`: named statement exists on this connection.
    pub prepared: Vec<Vec<bool>>,
    pub collector: Collector,
    /// Inside `\startpipeline` … `\endpipeline`: ReadyForQuery messages still expected.
    pub pipeline: Option<u32>,
    /// After the ROLLBACK completes: retry (true) or end as failed.
    pub retry_after_rollback: bool,
    pub failure_after_rollback: Option<hotbench_stats::FailureKind>,
    /// The command in flight sent a Parse for its named statement.
    pub parsed_named: bool,
    pub jitter: Jitter,
    pub reconnect_attempts: u32,
    pub disconnected_at: i64,
    /// When the connection attempt in progress was requested (reconnect back-off base).
    pub connect_at: i64,
    /// A meta-command that ran (its result, and when it started, µs): the core finishes it
    /// when the driver calls again with the time after it ([`Action::Continue`]).
    ///
    /// [`Action::Continue`]: crate::client_core::Action::Continue
    pub meta_done: Option<(MetaResult, i64)>,
}

/// What running a meta-command returned.
pub type MetaResult = Result<hotbench_script::Action, hotbench_script::ExecError>;

impl Slot {
    pub fn new(id: usize, group: usize, interp: Interp, shape: &[usize], seed: u64) -> Self {
        Slot {
            id,
            group,
            connected: false,
            host: None,
            fair: Default::default(),
            last_error: None,
            out: BytesMut::new(),
            phase: Phase::ChooseScript,
            resume: Resume::Command,
            wake_at: 0,
            interp,
            script: 0,
            cmd: 0,
            txn_scheduled: 0,
            txn_begin: 0,
            cmd_start: 0,
            tries: 1,
            retried: false,
            txns_done: 0,
            prepared: shape.iter().map(|&n| vec![false; n]).collect(),
            collector: Collector::default(),
            pipeline: None,
            retry_after_rollback: false,
            failure_after_rollback: None,
            parsed_named: false,
            jitter: Jitter::new(seed ^ (id as u64).wrapping_mul(0x2545_F491_4F6C_DD1D)),
            reconnect_attempts: 0,
            disconnected_at: 0,
            connect_at: 0,
            meta_done: None,
        }
    }

    pub fn is_done(&self) -> bool {
        matches!(self.phase, Phase::Finished | Phase::Aborted)
    }

    /// Needs to run now (not waiting for the server or a timer).
    pub fn is_runnable(&self, now: i64) -> bool {
        match self.phase {
            Phase::ChooseScript | Phase::StartTx | Phase::Command => true,
            Phase::Throttle | Phase::Sleep | Phase::Reconnect => now >= self.wake_at,
            _ => false,
        }
    }

    pub fn is_sleeping(&self) -> bool {
        matches!(
            self.phase,
            Phase::Throttle | Phase::Sleep | Phase::Reconnect
        )
    }

    /// Inside a transaction that a lost connection would fail.
    pub fn in_transaction(&self) -> bool {
        matches!(
            self.phase,
            Phase::StartTx | Phase::Command | Phase::WaitResult | Phase::WaitRollback
        ) || (self.phase == Phase::Sleep)
    }

    /// A fresh connection: nothing is prepared on it and nothing stale is left to send.
    pub fn mark_connected(&mut self) {
        self.forget_prepared();
        self.out.clear();
        self.connected = true;
    }

    /// Asks the driver to close the connection; unsent bytes go with it.
    pub fn disconnect(&mut self) {
        self.connected = false;
        self.out.clear();
    }

    pub fn forget_prepared(&mut self) {
        for s in &mut self.prepared {
            s.iter_mut().for_each(|p| *p = false);
        }
    }
}
