//! Guided search against swarm sampling on the same budget.
//!
//! The buggy arms' seed range is cut into `trials` equal blocks. In each block,
//! plain sampling's cost to the first find is read off the hunt's own runs (the
//! first failing seed of the block, counted from the block's start); guided
//! search gets the same number of runs, starts its fresh seeds at the block's
//! start and stops at its first find. Both count every run they made.

use super::guided::{self, Search, Setup};
use super::plan::{self, Arm};
use super::stats::Hunt;
use crate::lang::scenario;
use serde::Serialize;
use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};

/// One block of one key: swarm's runs to its first find, and guided search's.
#[derive(Clone, Debug, Serialize)]
pub struct Trial {
    pub seed_first: u64,
    pub seed_last: u64,
    /// Seeds run up to and including the first failing one (`None`: none failed).
    pub swarm_runs: Option<u64>,
    pub guided: Search,
}

#[derive(Clone, Debug, Serialize)]
pub struct KeyCompare {
    pub scenario: String,
    pub file: String,
    pub key: String,
    pub trials: Vec<Trial>,
}

/// The blocks `seeds` is cut into (the last takes the remainder).
pub fn blocks(seeds: &RangeInclusive<u64>, trials: usize) -> Vec<RangeInclusive<u64>> {
    let total = seeds.end() - seeds.start() + 1;
    let trials = (trials as u64).clamp(1, total);
    let size = total / trials;
    (0..trials)
        .map(|t| {
            let a = seeds.start() + t * size;
            let b = if t + 1 == trials {
                *seeds.end()
            } else {
                a + size - 1
            };
            a..=b
        })
        .collect()
}

struct Job {
    file: PathBuf,
    key: String,
    block: RangeInclusive<u64>,
    slot: (usize, usize),
}

/// Run the guided trials for every buggy arm of `hunt`.
pub fn compare(
    hunt: &Hunt,
    seeds: &RangeInclusive<u64>,
    trials: usize,
    jobs: usize,
) -> Result<Vec<KeyCompare>, String> {
    let mut out: Vec<KeyCompare> = Vec::new();
    let mut work = Vec::new();
    // A key switched by build searches on its buggy build's variant, and its
    // differential re-run plays the same schedule on the build that has it
    // fixed (a run on a build goes to that build's binary, schedule included).
    for arm in hunt.arms.iter().filter(|a| a.key.is_some()) {
        let key = arm.key.clone().expect("filtered");
        let k = out.len();
        let mut row = Vec::new();
        for (t, block) in blocks(seeds, trials).into_iter().enumerate() {
            let swarm_runs = arm
                .failing_all
                .iter()
                .find(|s| block.contains(s))
                .map(|s| s - block.start() + 1);
            row.push(Trial {
                seed_first: *block.start(),
                seed_last: *block.end(),
                swarm_runs,
                guided: Search::default(),
            });
            work.push(Job {
                file: PathBuf::from(&arm.file),
                key: key.clone(),
                block,
                slot: (k, t),
            });
        }
        out.push(KeyCompare {
            scenario: arm.scenario.clone(),
            file: arm.file.clone(),
            key,
            trials: row,
        });
    }
    let work = Arc::new(work);
    let next = Arc::new(AtomicUsize::new(0));
    let (sender, receiver) = mpsc::channel::<Result<((usize, usize), Search), String>>();
    let mut workers = Vec::new();
    for _ in 0..jobs.max(1) {
        let (work, next, sender) = (work.clone(), next.clone(), sender.clone());
        workers.push(std::thread::spawn(move || loop {
            let i = next.fetch_add(1, Ordering::SeqCst);
            let Some(job) = work.get(i) else { return };
            let sent =
                sender.send(search_block(&job.file, &job.key, &job.block).map(|s| (job.slot, s)));
            if sent.is_err() {
                return;
            }
        }));
    }
    drop(sender);
    for message in receiver {
        let ((k, t), search) = message?;
        out[k].trials[t].guided = search;
    }
    for w in workers {
        let _ = w.join();
    }
    Ok(out)
}

/// Guided search on one block of one key of the scenario at `file`: here, or,
/// when the key's buggy variant runs on a target build, in that build's binary
/// (`__child guided`). The binary has the model, so it can read the schedules
/// its runs played; here they would not load, and the search would keep no
/// corpus (every run fresh: swarm sampling under another name).
pub fn search_block(
    file: &std::path::Path,
    key: &str,
    block: &RangeInclusive<u64>,
) -> Result<Search, String> {
    let scenario = scenario::load(file).map_err(|e| e.to_string())?;
    let arm = Arm::Buggy(key.to_string());
    let variant = plan::variant(&scenario, &arm);
    if let Some(build) = crate::lang::targets::elsewhere(&scenario.file, variant.target.as_deref())?
    {
        return in_build(&build.binary, file, key, block);
    }
    // The tree of the text the scenario was loaded from (derived scenarios
    // keep its header).
    let tree = crate::lang::yaml::parse(&scenario.source, &crate::lang::yaml::Limits::default())
        .map_err(|e| e.to_string())?;
    let fixed = plan::variant(&scenario, &Arm::Fixed);
    let base = plan::base_variant(&scenario).expect("huntable");
    let setup = Setup {
        scenario: &scenario,
        tree: &tree,
        variant: &variant,
        base,
        fixed: &fixed,
    };
    let budget = (block.end() - block.start() + 1) as usize;
    Ok(guided::search(
        &setup,
        budget,
        *block.start(),
        *block.start(),
    ))
}

/// What `__child guided` answers: the search, and its find's scenario text
/// (which the search's own JSON leaves out).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Answer {
    pub search: Search,
    pub scenario_text: Option<String>,
}

/// Hand one block's search to the binary of the build it runs on.
fn in_build(
    binary: &std::path::Path,
    file: &std::path::Path,
    key: &str,
    block: &RangeInclusive<u64>,
) -> Result<Search, String> {
    let args = vec![
        "__child".to_string(),
        "guided".to_string(),
        file.display().to_string(),
        "--key".to_string(),
        key.to_string(),
        "--first".to_string(),
        block.start().to_string(),
        "--last".to_string(),
        block.end().to_string(),
    ];
    match crate::lang::targets::call(binary, &args, "")? {
        (0, stdout, _) => {
            let answer: Answer = serde_json::from_slice(&stdout)
                .map_err(|e| format!("{} gave no guided search: {e}", binary.display()))?;
            let mut search = answer.search;
            if let Some(find) = &mut search.find {
                find.scenario_text = answer.scenario_text;
            }
            Ok(search)
        }
        (code, _, stderr) => Err(format!(
            "{} could not run the guided search (exit {code}): {}",
            binary.display(),
            crate::lang::targets::tail(&stderr)
        )),
    }
}

fn median(mut v: Vec<u64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2] as f64
    } else {
        (v[n / 2 - 1] + v[n / 2]) as f64 / 2.0
    })
}

fn cell(runs: Option<u64>) -> String {
    runs.map(|r| r.to_string()).unwrap_or_else(|| "-".into())
}

/// The comparison as a Markdown section.
pub fn markdown(rows: &[KeyCompare]) -> String {
    let mut md = String::from("\n## Guided search against swarm sampling\n\n");
    md.push_str(
        "The same budget both ways: the buggy arms' seeds are cut into blocks; per block, swarm \
         sampling's runs to the first find are read off the table above, and guided search gets \
         as many runs over the same seeds, from the block's start (one run in four plays its seed's \
         own schedule after a warm-up of four; the rest play a corpus schedule with one edit \
         under that run's configuration, half of them a splice that goes on with what the run's \
         own seed draws from a drawn time). A cell \
         is runs up to and including the first find (`-`: none within the block). A guided find \
         is re-run with every bug fixed; `attributable` counts finds whose fixed re-run passed.\n\n",
    );
    md.push_str("| bug key | scenario | blocks | swarm: runs to first find | guided: runs to first find | median swarm | median guided | guided finds by derived runs | attributable |\n");
    md.push_str("|---|---|---:|---|---|---:|---:|---:|---:|\n");
    for row in rows {
        let swarm: Vec<String> = row.trials.iter().map(|t| cell(t.swarm_runs)).collect();
        let guided: Vec<String> = row
            .trials
            .iter()
            .map(|t| cell(t.guided.find.as_ref().map(|f| f.run as u64)))
            .collect();
        let ms = median(row.trials.iter().filter_map(|t| t.swarm_runs).collect());
        let mg = median(
            row.trials
                .iter()
                .filter_map(|t| t.guided.find.as_ref().map(|f| f.run as u64))
                .collect(),
        );
        let finds: Vec<&guided::Find> = row
            .trials
            .iter()
            .filter_map(|t| t.guided.find.as_ref())
            .collect();
        let derived = finds
            .iter()
            .filter(|f| matches!(f.origin, guided::Origin::Derived { .. }))
            .count();
        let attributable = finds
            .iter()
            .filter(|f| f.fixed_passed == Some(true))
            .count();
        let fmt = |m: Option<f64>| m.map(|m| format!("{m}")).unwrap_or_else(|| "-".into());
        md.push_str(&format!(
            "| {} | `{}` | {} | {} | {} | {} | {} | {} of {} | {} of {} |\n",
            row.key,
            row.scenario,
            row.trials.len(),
            swarm.join(", "),
            guided.join(", "),
            fmt(ms),
            fmt(mg),
            derived,
            finds.len(),
            attributable,
            finds.len()
        ));
    }
    md
}

/// Write each derived find's scenario under `dir`; the paths written.
pub fn write_finds(rows: &[KeyCompare], dir: &std::path::Path) -> Result<Vec<PathBuf>, String> {
    let mut written = Vec::new();
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for row in rows {
        for (t, trial) in row.trials.iter().enumerate() {
            let Some(find) = &trial.guided.find else {
                continue;
            };
            let Some(text) = &find.scenario_text else {
                continue;
            };
            let stem = format!("{}-{}-block{}", row.scenario, row.key, t + 1);
            let path = dir.join(format!("{stem}.yaml"));
            let text = text.replace("THIS_FILE", &path.display().to_string());
            crate::report::atomic_write(&path, text.as_bytes()).map_err(|e| e.to_string())?;
            written.push(path);
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_the_range_once() {
        let b = blocks(&(1..=1000), 5);
        assert_eq!(b.len(), 5);
        assert_eq!(b[0], 1..=200);
        assert_eq!(b[4], 801..=1000);
        let b = blocks(&(1..=10), 3);
        assert_eq!(b, [1..=3, 4..=6, 7..=10]);
        assert_eq!(blocks(&(5..=6), 9), [5..=5, 6..=6]);
    }

    #[test]
    fn medians() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![3, 1, 2]), Some(2.0));
        assert_eq!(median(vec![4, 1, 2, 3]), Some(2.5));
    }
}
