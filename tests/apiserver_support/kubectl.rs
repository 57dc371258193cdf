//! One kubectl of the machine's set (`kubectls()`), run against a test server with a discovery
//! cache of its own, and the test per installed version that every kubectl suite declares.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub struct Kubectl {
    /// `kubectl` or `1.NN`, named in every failure.
    pub label: String,
    pub bin: PathBuf,
    pub kubeconfig: PathBuf,
    cache: tempfile::TempDir,
}

pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Kubectl {
    pub fn new(label: &str, bin: &Path, kubeconfig: PathBuf) -> Kubectl {
        Kubectl {
            label: label.to_string(),
            bin: bin.to_path_buf(),
            kubeconfig,
            cache: tempfile::tempdir().expect("cache dir"),
        }
    }

    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(&self.bin);
        c.arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(self.cache.path())
            .args(args)
            .stdin(Stdio::null())
            // The suites start thousands of kubectls on two cores. A kubectl's command lives a
            // tenth of a second: collecting its garbage four times less often and on one
            // thread takes a third off its CPU and changes nothing it sends or prints.
            .env("GOGC", "400")
            .env("GOMAXPROCS", "1");
        c
    }

    pub fn run(&self, args: &[&str]) -> Out {
        let o = self.cmd(args).output().expect("run kubectl");
        Out {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into(),
            stderr: String::from_utf8_lossy(&o.stderr).into(),
        }
    }

    /// Run, fail the test unless kubectl exits 0, and keep both streams.
    pub fn ok_out(&self, args: &[&str]) -> Out {
        let o = self.run(args);
        assert_eq!(
            o.code, 0,
            "{}: kubectl {args:?} failed: {}{}",
            self.label, o.stdout, o.stderr
        );
        o
    }

    /// Run, fail the test unless kubectl exits 0, and return what it printed.
    pub fn ok(&self, args: &[&str]) -> String {
        self.ok_out(args).stdout
    }
}

/// Runs `f` with the kubectl called `label` when the machine has it; a printed note otherwise.
pub fn with_kubectl(label: &str, f: impl FnOnce(&str, &Path)) {
    match super::kubectls().iter().find(|(l, _)| l == label) {
        Some((_, bin)) => f(label, bin),
        None if super::chosen_kubectls().is_some_and(|c| !c.iter().any(|l| l == label)) => {
            eprintln!("note: kubectl {label} is not in KEXPLORE_TEST_KUBECTLS; skipping")
        }
        None if label == "kubectl" && super::which("kubectl").is_some() => eprintln!(
            "note: kubectl on PATH is the Cloud SDK's dispatcher to the kubectl.1.NN tested beside it; skipping"
        ),
        None => eprintln!("note: kubectl {label} is not installed here; skipping"),
    }
}

/// Runs `f` with one kubectl, for a test that needs one and not each: the `kubectl` on PATH,
/// or, when that is the Cloud SDK's dispatcher (left out of [`super::kubectls`]), the newest
/// version beside it that `KEXPLORE_TEST_KUBECTLS` allows. Asking `with_kubectl("kubectl")`
/// there skipped the test, and for a day 13 tests ran nowhere.
pub fn with_one_kubectl(f: impl FnOnce(&str, &Path)) {
    let all = super::kubectls();
    match all
        .iter()
        .find(|(l, _)| l == "kubectl")
        .or_else(|| all.last())
    {
        Some((label, bin)) => f(label, bin),
        None => eprintln!(
            "note: no kubectl is installed here (or allowed by KEXPLORE_TEST_KUBECTLS); skipping"
        ),
    }
}

/// One `#[test]` per kubectl the suites cover, each calling `$run(label)`.
#[macro_export]
macro_rules! per_kubectl {
    ($run:path) => {
        #[test]
        fn kubectl_default() {
            $run("kubectl")
        }
        #[test]
        fn kubectl_1_27() {
            $run("1.27")
        }
        #[test]
        fn kubectl_1_28() {
            $run("1.28")
        }
        #[test]
        fn kubectl_1_29() {
            $run("1.29")
        }
        #[test]
        fn kubectl_1_30() {
            $run("1.30")
        }
        #[test]
        fn kubectl_1_31() {
            $run("1.31")
        }
        #[test]
        fn kubectl_1_32() {
            $run("1.32")
        }
        #[test]
        fn kubectl_1_33() {
            $run("1.33")
        }
    };
}
