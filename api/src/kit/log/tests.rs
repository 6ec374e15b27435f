use super::*;
use crate::testenv::TestEnv;
use std::cell::Cell;
use std::time::Duration;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Ent {
    term: u64,
    index: u64,
}

type Id = (u64, u64);

const KEY: EntryKey<Ent, Id> = EntryKey {
    id: |e| (e.term, e.index),
    index: |id| id.1,
};

fn ent(term: u64, index: u64) -> Ent {
    Ent { term, index }
}

/// What the listener heard, in order.
type Heard = Rc<RefCell<Vec<String>>>;

fn open(ctx: &Rc<NodeCtx>, heard: &Heard) -> DurableLog<Ent, Id> {
    let heard = heard.clone();
    let spawn = |task: Task| {
        tokio::task::spawn_local(task);
    };
    DurableLog::open(ctx.clone(), "log", KEY, spawn, move |change| {
        heard.borrow_mut().push(format!("{change:?}"));
    })
    .expect("the log opens")
}

/// Append and wait for the flush notification.
async fn append_flushed(log: &DurableLog<Ent, Id>, entries: Vec<Ent>) -> io::Result<()> {
    let (done, flushed) = oneshot::channel();
    log.append(entries, move |result| {
        let _ = done.send(result);
    })
    .await?;
    flushed.await.expect("the writer answers")
}

/// Run `lives` one after another on host `n`, crashing it between them (unsynced
/// writes are lost); each life ends by setting its flag.
fn lives(env: &Rc<TestEnv>, lives: Vec<fn(Rc<NodeCtx>, Heard) -> Task>, heard: &Heard) {
    let mut sim = turmoil::Builder::new().rng_seed(1).build();
    let done = Rc::new(Cell::new(0usize));
    let life = Rc::new(Cell::new(0usize));
    let (env, heard2, done2, life2) = (env.clone(), heard.clone(), done.clone(), life.clone());
    let lives2 = lives.clone();
    sim.host("n", move || {
        let ctx = env.ctx(&["n"], 0);
        let (heard, done, i) = (heard2.clone(), done2.clone(), life2.get());
        let body = lives2[i](ctx, heard);
        async move {
            body.await;
            done.set(i + 1);
            std::future::pending::<()>().await;
            Ok(())
        }
    });
    for i in 0..lives.len() {
        let mut steps = 0;
        while done.get() <= i {
            sim.step().expect("the host runs");
            steps += 1;
            assert!(steps < 100_000, "life {i} never ended");
        }
        if i + 1 < lives.len() {
            life.set(i + 1);
            sim.crash("n");
            sim.bounce("n");
        }
    }
}

#[test]
fn appended_entries_are_readable_at_once_and_durable_after_the_flush() {
    let env = TestEnv::new("kit-log-flush");
    let heard: Heard = Rc::default();
    lives(
        &env,
        vec![|ctx, heard| {
            Box::pin(async move {
                let log = open(&ctx, &heard);
                let flushed = Rc::new(RefCell::new(None));
                let seen = flushed.clone();
                log.append(vec![ent(1, 1), ent(1, 2)], move |r| {
                    *seen.borrow_mut() = Some(r.is_ok());
                })
                .await
                .expect("appended");
                // Readable before it is durable.
                assert_eq!(log.read(1..).await.expect("read").len(), 2);
                assert_eq!(log.state().durable, None);
                assert_eq!(*flushed.borrow(), None);
                tokio::time::sleep(Duration::from_millis(1)).await;
                assert_eq!(*flushed.borrow(), Some(true));
                assert_eq!(log.state().durable, Some((1, 2)));
                assert_eq!(log.last_id(), Some((1, 2)));
            })
        }],
        &heard,
    );
    assert_eq!(
        *heard.borrow(),
        vec![
            "Truncated(None)",
            "Flushed([])",
            "Flushed([(1, 1), (1, 2)])"
        ]
    );
}

#[test]
fn a_crash_keeps_what_was_flushed_drops_the_rest_and_a_torn_tail() {
    let env = TestEnv::new("kit-log-crash");
    ENV.with(|e| *e.borrow_mut() = Some(env.clone()));
    let heard: Heard = Rc::default();
    let first: fn(Rc<NodeCtx>, Heard) -> Task = |ctx, heard| {
        Box::pin(async move {
            let log = open(&ctx, &heard);
            append_flushed(&log, vec![ent(1, 1), ent(1, 2)])
                .await
                .expect("flushed");
            // The next fsync fails: entry 3 is written but never durable.
            arm_flush(&ctx, Some("io"));
            let result = append_flushed(&log, vec![ent(1, 3)]).await;
            assert_eq!(
                result.expect_err("the flush fails").to_string(),
                "injected log flush error: io"
            );
            arm_flush(&ctx, None);
        })
    };
    let torn: fn(Rc<NodeCtx>, Heard) -> Task = |ctx, heard| {
        Box::pin(async move {
            let log = open(&ctx, &heard);
            assert_eq!(log.ids(), BTreeMap::from([(1, (1, 1)), (2, (1, 2))]));
            // A record cut short, made durable: a crash tore it.
            ctx.disk()
                .append("log", &[40, 0, 0, 0, 1, 2, 3])
                .expect("written");
            ctx.disk().sync("log").expect("synced");
        })
    };
    let second: fn(Rc<NodeCtx>, Heard) -> Task = |ctx, heard| {
        Box::pin(async move {
            let log = open(&ctx, &heard);
            assert_eq!(log.ids(), BTreeMap::from([(1, (1, 1)), (2, (1, 2))]));
            assert_eq!(log.state().durable, Some((1, 2)));
            append_flushed(&log, vec![ent(2, 3)])
                .await
                .expect("flushed");
        })
    };
    let third: fn(Rc<NodeCtx>, Heard) -> Task = |ctx, heard| {
        Box::pin(async move {
            // What was appended after the torn tail is read back.
            let log = open(&ctx, &heard);
            let ids = BTreeMap::from([(1, (1, 1)), (2, (1, 2)), (3, (2, 3))]);
            assert_eq!(log.ids(), ids);
        })
    };
    lives(&env, vec![first, torn, second, third], &heard);
    let heard = heard.borrow();
    assert_eq!(
        heard.last().map(String::as_str),
        Some("Flushed([(1, 1), (1, 2), (2, 3)])")
    );
}

thread_local! {
    static ENV: RefCell<Option<Rc<TestEnv>>> = const { RefCell::new(None) };
}

fn arm_flush(ctx: &NodeCtx, kind: Option<&str>) {
    ENV.with(|env| {
        let env = env.borrow();
        let env = env.as_ref().expect("the test set its env");
        env.arm(ctx.name(), LogPoint::Flush, kind);
    });
}

#[test]
fn a_truncation_is_durable_at_once_and_a_purge_drops_the_prefix() {
    let env = TestEnv::new("kit-log-truncate");
    ENV.with(|e| *e.borrow_mut() = Some(env.clone()));
    let heard: Heard = Rc::default();
    let first: fn(Rc<NodeCtx>, Heard) -> Task = |ctx, heard| {
        Box::pin(async move {
            let log = open(&ctx, &heard);
            let entries = (1..=4).map(|i| ent(1, i)).collect();
            append_flushed(&log, entries).await.expect("flushed");
            assert!(log.truncate_after(Some(2)).expect("truncated"));
            assert!(!log.truncate_after(Some(2)).expect("nothing left to cut"));
            assert_eq!(log.state().durable, Some((1, 2)));
            log.purge((1, 1)).expect("purged");
            assert_eq!(log.ids(), BTreeMap::from([(2, (1, 2))]));
        })
    };
    let second: fn(Rc<NodeCtx>, Heard) -> Task = |ctx, heard| {
        Box::pin(async move {
            let log = open(&ctx, &heard);
            // The truncation held; the purge was not synced, so it may be lost,
            // and the purged entry comes back (a log may keep more than asked).
            assert_eq!(log.ids(), BTreeMap::from([(1, (1, 1)), (2, (1, 2))]));
            assert_eq!(log.state().purged, None);
        })
    };
    lives(&env, vec![first, second], &heard);
    assert!(heard.borrow().contains(&"Truncated(Some(2))".to_string()));
}

#[test]
fn a_save_waits_for_earlier_appends_and_is_durable() {
    let env = TestEnv::new("kit-log-save");
    ENV.with(|e| *e.borrow_mut() = Some(env.clone()));
    let heard: Heard = Rc::default();
    let first: fn(Rc<NodeCtx>, Heard) -> Task = |ctx, heard| {
        Box::pin(async move {
            let log = open(&ctx, &heard);
            let order = Rc::new(RefCell::new(Vec::new()));
            let seen = order.clone();
            log.append(vec![ent(1, 1)], move |r| {
                seen.borrow_mut().push(format!("flushed {}", r.is_ok()));
            })
            .await
            .expect("appended");
            log.save("vote", encode(&7u64)).await.expect("saved");
            order.borrow_mut().push("saved".to_string());
            assert_eq!(*order.borrow(), vec!["flushed true", "saved"]);
            assert_eq!(log.load::<u64>("vote").expect("read"), Some(7));
        })
    };
    let second: fn(Rc<NodeCtx>, Heard) -> Task = |ctx, heard| {
        Box::pin(async move {
            let log = open(&ctx, &heard);
            assert_eq!(log.load::<u64>("vote").expect("read"), Some(7));
            assert_eq!(log.ids(), BTreeMap::from([(1, (1, 1))]));
        })
    };
    lives(&env, vec![first, second], &heard);
}

#[test]
fn the_read_and_write_points_fail_their_calls() {
    let env = TestEnv::new("kit-log-points");
    ENV.with(|e| *e.borrow_mut() = Some(env.clone()));
    let heard: Heard = Rc::default();
    let first: fn(Rc<NodeCtx>, Heard) -> Task = |ctx, heard| {
        Box::pin(async move {
            let log = open(&ctx, &heard);
            ENV.with(|e| {
                let e = e.borrow();
                let e = e.as_ref().expect("set");
                e.arm("n", LogPoint::Read, Some("io"));
                e.arm("n", LogPoint::Write, Some("io"));
            });
            let read = log.read(..).await.expect_err("injected");
            assert_eq!(read.to_string(), "injected log read error: io");
            let write = log
                .append(vec![ent(1, 1)], |_| {})
                .await
                .expect_err("injected");
            assert_eq!(write.to_string(), "injected log write error: io");
            assert!(log.ids().is_empty(), "a failed write appends nothing");
            ENV.with(|e| {
                let e = e.borrow();
                let e = e.as_ref().expect("set");
                e.arm("n", LogPoint::Read, None);
                e.arm("n", LogPoint::Write, None);
            });
        })
    };
    lives(&env, vec![first], &heard);
}
