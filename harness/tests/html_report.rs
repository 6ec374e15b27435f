//! The HTML run report as people get it: written by `run --report-dir`, re-rendered
//! by `faultline report`, and opened in a real browser (headless Chromium) to check
//! what a reader sees after the page's script ran.
//!
//! The browser test needs Chromium. It fails (never skips) without it: install
//! Debian's `chromium` package (`apt-get install -y chromium`; `.ci/run` does this),
//! or point `FAULTLINE_CHROMIUM` at another Chromium or Chrome binary.

mod common;

use faultline::report::run_html;
use faultline::sim::runner::{self, RunResult};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::faultline;

fn temp_dir(name: &str) -> PathBuf {
    common::temp_dir("html", name)
}

fn canary_buggy() -> RunResult {
    let scenario = common::bundled()
        .into_iter()
        .find(|s| s.name == "raftkv-canary-quorum")
        .expect("the canary is bundled");
    runner::run(&scenario, scenario.variant("buggy").unwrap(), 1)
}

#[test]
fn run_writes_report_html_and_faultline_report_re_renders_it_byte_for_byte() {
    let dir = temp_dir("roundtrip");
    let out = faultline(&[
        "run",
        "scenarios/raftkv/canary-quorum.yaml",
        "--variant",
        "buggy",
        "--report-dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run_dir = dir.join("raftkv-canary-quorum/buggy/seed-1");
    let written = std::fs::read(run_dir.join("report.html")).expect("run writes report.html");
    let again = dir.join("again.html");
    let out = faultline(&[
        "report",
        run_dir.join("report.json").to_str().unwrap(),
        "-o",
        again.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(&again).unwrap(),
        written,
        "same JSON, same page"
    );
    // Without -o it goes next to the JSON.
    std::fs::remove_file(run_dir.join("report.html")).unwrap();
    let out = faultline(&["report", run_dir.join("report.json").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(std::fs::read(run_dir.join("report.html")).unwrap(), written);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn faultline_report_rejects_bad_files_with_exit_2() {
    let dir = temp_dir("bad");
    let missing = dir.join("missing.json");
    let out = faultline(&["report", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("missing.json: cannot read"), "{stderr}");

    let not_a_report = dir.join("other.json");
    std::fs::write(&not_a_report, br#"{"hello": "world"}"#).unwrap();
    let out = faultline(&["report", not_a_report.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not a faultline report"), "{stderr}");
    assert!(
        !dir.join("other.html").exists(),
        "nothing written for a bad file"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The Chromium binary: `FAULTLINE_CHROMIUM`, else `chromium` (Debian), else the
/// usual Chrome names on PATH. Panics with install instructions when there is none.
fn chromium() -> PathBuf {
    const INSTALL: &str =
        "Install it: `sudo apt-get install -y chromium` (Debian/Ubuntu; .ci/run does \
         this in CI), or set FAULTLINE_CHROMIUM=/path/to/chromium-or-chrome.";
    if let Some(path) = std::env::var_os("FAULTLINE_CHROMIUM") {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "FAULTLINE_CHROMIUM={} is not a file. {INSTALL}",
            path.display()
        );
        return path;
    }
    let names = [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ];
    let dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    for name in names {
        for dir in dirs
            .iter()
            .map(PathBuf::as_path)
            .chain([Path::new("/usr/bin")])
        {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    panic!(
        "headless Chromium is needed to test the HTML report as a reader sees it, and none \
         was found on PATH or in /usr/bin. {INSTALL}"
    );
}

/// Load `url` in headless Chromium and return the DOM after the page's scripts ran.
fn dump_dom(url: &str) -> String {
    let profile = temp_dir(&format!(
        "profile-{}",
        url.len() + url.bytes().map(usize::from).sum::<usize>()
    ));
    let binary = chromium();
    // Output goes to files: a page's DOM is larger than a pipe's buffer, and a
    // browser blocked on a full pipe would never exit.
    let stdout_path = profile.join("dom.html");
    let stderr_path = profile.join("stderr.txt");
    let mut child = Command::new(&binary)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
        ])
        .arg(format!(
            "--user-data-dir={}",
            profile.join("data").display()
        ))
        .arg("--dump-dom")
        .arg(url)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout_path).unwrap())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
    // A hung browser must fail the test, not hang CI.
    #[allow(
        clippy::disallowed_methods,
        reason = "wall-clock ok: a watchdog on a real browser process"
    )]
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{} did not finish within 120 s", binary.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let dom = std::fs::read_to_string(&stdout_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&profile);
    assert!(
        status.success() && dom.contains("</html>"),
        "{} failed ({status:?}):\n{stderr}",
        binary.display(),
    );
    dom
}

/// The values of `attr` on every element whose class list starts with `class_prefix`.
fn attr_of_class(dom: &str, tag: &str, class_prefix: &str, attr: &str) -> Vec<(String, String)> {
    let open = format!(r#"<{tag} class="{class_prefix}"#);
    dom.match_indices(&open)
        .map(|(at, _)| {
            let element = &dom[at..at + dom[at..].find('>').unwrap()];
            let get = |name: &str| {
                let key = format!(r#" {name}=""#);
                element.find(&key).map(|s| {
                    let start = s + key.len();
                    element[start..start + element[start..].find('"').unwrap()].to_string()
                })
            };
            (
                get("class").unwrap_or_default(),
                get(attr).unwrap_or_default(),
            )
        })
        .collect()
}

/// Attribute values as the DOM serializer wrote them, back to text.
fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

#[test]
fn chromium_shows_lanes_fault_marks_and_the_divergence_view() {
    let result = canary_buggy();
    let dir = temp_dir("chromium");
    let page = dir.join("report.html");
    std::fs::write(&page, run_html(&result)).unwrap();
    let url = format!("file://{}", page.display());
    let dom = dump_dom(&url);

    // The page's script ran to the end (it marks the document last).
    assert!(
        dom.contains(r#"<html lang="en" data-ready="1">"#),
        "the report's script did not finish; DOM head:\n{}",
        &dom[..dom.len().min(600)]
    );

    // One lane per node, in order.
    let lanes = attr_of_class(&dom, "g", "lane\"", "data-node");
    let lane_names: Vec<&str> = lanes.iter().map(|(_, n)| n.as_str()).collect();
    let node_names: Vec<&str> = result.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(lane_names, node_names);

    // A fault mark for every fault in the trail, carrying its hover text (the
    // script moved each <title> into data-tip for the tooltip).
    let marks = attr_of_class(&dom, "g", "mk ", "data-ev");
    let tips = attr_of_class(&dom, "g", "mk ", "data-tip");
    assert_eq!(marks.len(), tips.len());
    assert!(
        tips.iter().all(|(_, tip)| !tip.is_empty()),
        "every mark has hover text"
    );
    let faults: Vec<usize> = result
        .trail
        .events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.kind.is_fault() || e.kind == faultline::base::trail::Kind::FailPointHit)
        .map(|(i, _)| i)
        .collect();
    assert!(!faults.is_empty(), "the canary injects a partition");
    for i in &faults {
        let e = &result.trail.events[*i];
        let found = marks.iter().zip(&tips).any(|((class, ev), (_, tip))| {
            class.split(' ').any(|c| c == "fault")
                && ev.split(',').any(|x| x == i.to_string())
                && unescape(tip).contains(&e.detail)
        });
        assert!(found, "no fault mark with hover text for #{i} {}", e.detail);
    }
    // The partition is a shaded band.
    assert!(dom.contains(r#"<g class="band band-partition""#));

    // The divergence view, rendered: the key, each replica's value, the odd one out.
    let start = dom
        .find(r#"<section id="divergence""#)
        .expect("divergence view");
    let view = &dom[start..start + dom[start..].find("</section>").unwrap()];
    assert!(
        view.contains(r#"First differing key: <code class="key">k</code>"#),
        "{view}"
    );
    assert!(view.contains(
        r#"<div class="replica odd"><div class="rname">n3</div><div class="rval">minority</div>"#
    ));
    assert_eq!(
        view.matches(r#"<div class="rval">majority</div>"#).count(),
        2
    );
    assert!(view.contains("put k=minority"));
    // The failed invariant is in the findings, listed once.
    let findings = &dom[dom.find(r#"<section id="findings""#).unwrap()..];
    let findings = &findings[..findings.find("</section>").unwrap()];
    assert!(findings.contains("applied_entries_stable"));
    assert!(!view.contains("applied_entries_stable"));

    // The trail table's counter was filled in by the script.
    let n = result.trail.len();
    assert!(
        dom.contains(&format!("showing {n} of {n} events")),
        "filter counter missing"
    );

    // Filters from the URL work: only network events remain visible.
    let dom = dump_dom(&format!("{url}#kind=network"));
    let network = result
        .trail
        .events
        .iter()
        .filter(|e| e.kind == faultline::base::trail::Kind::Network)
        .count();
    assert!(dom.contains(&format!("showing {network} of {n} events")));
    let rows: Vec<&str> = dom
        .match_indices(r#"<tr id="ev-"#)
        .map(|(at, _)| &dom[at..at + dom[at..].find('>').unwrap()])
        .collect();
    assert_eq!(rows.len(), n);
    let hidden = rows.iter().filter(|r| r.contains(" hidden")).count();
    assert_eq!(hidden, n - network, "every other row is hidden");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// HDDS-17603 as a reader sees it: the divergence view names the first index
/// whose effect differs (11), marks om2 as the replica that failed it, links the
/// flush, the exit and the restart, and the list of events behind the differing
/// key is not empty (no apply event lists `chain./v/b`: the cause's events are
/// what fills it).
#[test]
#[expect(
    clippy::wildcard_enum_match_arm,
    reason = "the test lists the kinds the cause must link to: any other kind is a test failure"
)]
fn chromium_shows_the_cause_of_hdds_17603() {
    let scenario = common::bundled()
        .into_iter()
        .find(|s| s.name == "hdds-17603-purge-read-error")
        .expect("HDDS-17603 is bundled");
    let result = runner::run(&scenario, scenario.variant("buggy").unwrap(), 1);
    assert!(result.passed, "{:?}", result.findings);
    let dir = temp_dir("chromium-cause");
    let page = dir.join("report.html");
    std::fs::write(&page, run_html(&result)).unwrap();
    let dom = dump_dom(&format!("file://{}", page.display()));
    assert!(dom.contains(r#"data-ready="1""#), "the report's script ran");

    let start = dom
        .find(r#"<div class="cause" id="cause">"#)
        .expect("cause block");
    let block = &dom[start..start + dom[start..].find("</table>").unwrap()];
    assert!(block.contains("<h3>Cause: index 11</h3>"), "{block}");
    let summary = unescape(block);
    assert!(
        summary.contains("first differing index 11: om1, om3 applied (t:1) SnapshotPurge"),
        "{summary}"
    );
    // om2's row is the odd one, and it links the events a reader checks next.
    let row_at = block
        .find(r#"<tr class="odd" data-node="om2">"#)
        .expect("om2 is the replica that differs");
    let row = &block[row_at..row_at + block[row_at..].find("</tr>").unwrap()];
    assert!(row.contains("failed (t:1) SnapshotPurge"), "{row}");
    assert!(
        row.contains("resumed at index 12 without applying 11 again"),
        "{row}"
    );
    let links: Vec<usize> = row
        .match_indices(r##"href="#ev-"##)
        .map(|(at, m)| {
            let rest = &row[at + m.len()..];
            rest[..rest.find('"').unwrap()].parse().unwrap()
        })
        .collect();
    let kinds: Vec<&str> = links
        .iter()
        .map(|&i| match result.trail.events[i].kind {
            faultline::base::trail::Kind::Apply => "apply",
            faultline::base::trail::Kind::FailPointHit => "hit",
            faultline::base::trail::Kind::Storage => "storage",
            faultline::base::trail::Kind::Exit => "exit",
            faultline::base::trail::Kind::Crash => "crash",
            faultline::base::trail::Kind::Start => "start",
            other => panic!("unexpected link to a {other:?} event"),
        })
        .collect();
    assert_eq!(kinds, ["apply", "hit", "storage", "exit", "crash", "start"]);
    for i in &links {
        assert!(
            dom.contains(&format!(r#"<tr id="ev-{i}""#)),
            "link #{i} has a trail row"
        );
    }
    // The events behind the differing key: the cause's, ringed and listed.
    let view = &dom[dom.find(r#"<section id="divergence""#).unwrap()..];
    assert!(view.contains("Trail events that touched"));
    assert!(
        !view.contains("No event lists the key"),
        "the list is never empty here"
    );
    let touched = &view[view.find(r#"<table class="events touched">"#).unwrap()..];
    let touched = &touched[..touched.find("</table>").unwrap()];
    for i in &links {
        assert!(
            touched.contains(&format!(r#"data-goto="{i}""#)),
            "#{i} listed"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `page` as headless Chromium lays it out (its default window), after the page's script ran
/// and then `probe` (JavaScript that leaves its answer in the root element's
/// `data-probe`), with `css` added. The copy drops the page's
/// Content-Security-Policy, which would refuse the probe; the page itself is
/// unchanged. Returns the probe's answer.
fn probe(page: &str, css: &str, probe: &str, fragment: &str) -> String {
    let dir = temp_dir(&format!(
        "probe-{}",
        css.len() + probe.len() + fragment.len()
    ));
    let csp_at = page
        .find(r#"<meta http-equiv="Content-Security-Policy""#)
        .unwrap();
    let csp_end = csp_at + page[csp_at..].find('>').unwrap() + 1;
    let copy = format!("{}{}", &page[..csp_at], &page[csp_end..])
        .replacen("</head>", &format!("<style>{css}</style></head>"), 1)
        .replacen(
            "</body></html>",
            &format!("<script>(function () {{ {probe} }})();</script></body></html>"),
            1,
        );
    let file = dir.join("probe.html");
    std::fs::write(&file, copy).unwrap();
    let dom = dump_dom(&format!("file://{}{fragment}", file.display()));
    std::fs::remove_dir_all(&dir).unwrap();
    let at = dom
        .find(r#"data-probe=""#)
        .unwrap_or_else(|| panic!("the probe did not answer:\n{}", &dom[..dom.len().min(600)]))
        + 12;
    unescape(&dom[at..at + dom[at..].find('"').unwrap()])
}

/// The height of the whole page.
const HEIGHT: &str =
    "document.documentElement.setAttribute('data-probe', String(document.documentElement.scrollHeight));";

/// What happens to a folded row: whether it is shown (its height) before and
/// after a click on its diagram mark, and whether it is then highlighted.
const CLICK_A_FOLDED_MARK: &str = r#"
  var marks = document.querySelectorAll('svg.diagram .mk[data-ev]');
  for (var k = 0; k < marks.length; k++) {
    var ev = marks[k].getAttribute('data-ev').split(',')[0];
    var row = document.getElementById('ev-' + ev);
    if (!row || !row.parentNode.classList.contains('grp')) { continue; }
    var before = row.offsetHeight;
    marks[k].dispatchEvent(new MouseEvent('click', { bubbles: true }));
    document.documentElement.setAttribute('data-probe', 'ev=' + ev + ' before=' + before +
      ' after=' + row.offsetHeight + ' hl=' + row.classList.contains('hl'));
    return;
  }
  document.documentElement.setAttribute('data-probe', 'no mark of a folded row');
"#;

/// A chaos run with a workload is mostly ops: the trail table folds their runs
/// into summary rows, so the page is a fraction of its unfolded height, and a
/// click on a folded event's diagram mark, or a link to its row, opens its run.
#[test]
fn chromium_folds_runs_of_ops_and_opens_one_for_a_click_or_a_link() {
    let scenario = common::bundled()
        .into_iter()
        .find(|s| s.name == "raftkv-chaos")
        .expect("the raftkv chaos scenario is bundled");
    let result = runner::run(&scenario, scenario.variant("default").unwrap(), 1);
    let page = run_html(&result);
    assert!(
        page.contains(r#"<tbody class="grp""#),
        "runs of ops are folded"
    );
    let folded: usize = probe(&page, "", HEIGHT, "").parse().unwrap();
    // Every run opened, and its summary row gone: the table as it was unfolded.
    let unfold =
        "tbody.grp>tr{display:table-row !important}tbody.grp>tr.gsum{display:none !important}";
    let unfolded: usize = probe(&page, unfold, HEIGHT, "").parse().unwrap();
    eprintln!("raftkv chaos page: {folded} px folded, {unfolded} px unfolded");
    assert!(
        folded * 4 < unfolded,
        "{folded} px folded is not much shorter than {unfolded} px"
    );

    let clicked = probe(&page, "", CLICK_A_FOLDED_MARK, "");
    let field = |text: &str, name: &str| -> String {
        let at = text
            .find(&format!("{name}="))
            .unwrap_or_else(|| panic!("{text}"))
            + name.len()
            + 1;
        text[at..].split(' ').next().unwrap().to_string()
    };
    assert_eq!(field(&clicked, "before"), "0", "folded: {clicked}");
    assert_ne!(
        field(&clicked, "after"),
        "0",
        "shown after the click: {clicked}"
    );
    assert_eq!(field(&clicked, "hl"), "true", "{clicked}");

    // A link to the same row opens its run too.
    let ev = field(&clicked, "ev");
    let linked = probe(
        &page,
        "",
        &format!(
            "var r = document.getElementById('ev-{ev}'); \
             document.documentElement.setAttribute('data-probe', String(r.offsetHeight));"
        ),
        &format!("#ev-{ev}"),
    );
    assert_ne!(linked, "0", "#ev-{ev} is shown when linked to");
}
