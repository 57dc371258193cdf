//! End to end: the real binary in a detached tmux session at 120×40, on a kubeconfig this test
//! mints itself (rcgen: a `CN=kubernetes` CA and a `CN=kubernetes-admin,O=system:masters`
//! client). Views 1 and 2 must render, `?` must list the keys, and `q` must exit 0 with the
//! terminal given back (alternate screen left, mouse reporting off). Every wait is a bounded
//! poll. Skipped, with a note, where tmux is not installed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use base64::Engine as _;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

const WAIT: Duration = Duration::from_secs(15);

/// A private tmux server (its own socket), killed when the test ends however it ends.
struct Tmux {
    socket: String,
    config: PathBuf,
}

impl Tmux {
    fn cmd(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .arg("-f")
            .arg(&self.config)
            .args(args)
            .output()
            .expect("tmux runs")
    }

    fn text(&self, args: &[&str]) -> String {
        String::from_utf8_lossy(&self.cmd(args).stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.text(&["capture-pane", "-p", "-t", "kx"])
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "kx"];
        args.extend_from_slice(keys);
        let out = self.cmd(&args);
        assert!(out.status.success(), "send-keys {keys:?} failed");
    }

    /// Polls until `pred` holds for the pane's text (or a format), or fails with the last text.
    fn wait_for(
        &self,
        what: &str,
        read: impl Fn(&Tmux) -> String,
        pred: impl Fn(&str) -> bool,
    ) -> String {
        let start = Instant::now();
        loop {
            let text = read(self);
            if pred(&text) {
                return text;
            }
            if start.elapsed() > WAIT {
                panic!("timed out waiting for {what}; last seen:\n{text}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn wait_screen(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        self.wait_for(what, Tmux::screen, pred)
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

fn tmux_available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Writes a kubeadm-like kubeconfig with freshly minted certificates; returns its path.
fn write_kubeconfig(dir: &Path) -> PathBuf {
    let ca_key = KeyPair::generate().expect("CA key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca.distinguished_name.push(DnType::CommonName, "kubernetes");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
    ];
    let ca_cert = ca.self_signed(&ca_key).expect("CA cert");
    let issuer = Issuer::new(ca, ca_key);

    let key = KeyPair::generate().expect("client key");
    let mut client = CertificateParams::new(Vec::<String>::new()).expect("client params");
    client
        .distinguished_name
        .push(DnType::OrganizationName, "system:masters");
    client
        .distinguished_name
        .push(DnType::CommonName, "kubernetes-admin");
    client.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    client.use_authority_key_identifier_extension = true;
    let client_cert = client.signed_by(&key, &issuer).expect("client cert");

    let b64 = |s: String| base64::engine::general_purpose::STANDARD.encode(s);
    let yaml = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: kubernetes-admin@kubernetes\n\
         clusters:\n- name: kubernetes\n  cluster:\n    server: https://127.0.0.1:6443\n    \
         certificate-authority-data: {}\n\
         users:\n- name: kubernetes-admin\n  user:\n    client-certificate-data: {}\n    \
         client-key-data: {}\n\
         contexts:\n- name: kubernetes-admin@kubernetes\n  context:\n    cluster: kubernetes\n    \
         user: kubernetes-admin\n",
        b64(ca_cert.pem()),
        b64(client_cert.pem()),
        b64(key.serialize_pem()),
    );
    let path = dir.join("kubeadm.yaml");
    std::fs::write(&path, yaml).expect("write kubeconfig");
    path
}

#[test]
fn views_render_help_lists_keys_and_q_restores_the_terminal() {
    if !tmux_available() {
        println!("note: tmux is not installed; skipping the tmux end-to-end test");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = write_kubeconfig(dir.path());
    // Keep the pane after the program exits so its exit status and screen can be read.
    let config = dir.path().join("tmux.conf");
    std::fs::write(&config, "set -g remain-on-exit on\nset -g status off\n").expect("tmux.conf");
    let tmux = Tmux {
        socket: format!("kexplore-test-{}", std::process::id()),
        config,
    };
    let bin = env!("CARGO_BIN_EXE_kexplore");
    // A shell runs kexplore, prints its exit status on the normal screen, then waits for a key:
    // that leaves time to read the terminal's modes after kexplore is gone. The pane's own
    // exit status (remain-on-exit) is the shell's, which passes kexplore's on.
    let command = format!(
        "sh -c '\"$0\" --kubeconfig \"$1\"; s=$?; echo \"kexplore exited with status $s\"; read _; exit $s' '{bin}' '{}'",
        kubeconfig.display()
    );
    let out = tmux.cmd(&[
        "new-session",
        "-d",
        "-s",
        "kx",
        "-x",
        "120",
        "-y",
        "40",
        &command,
    ]);
    assert!(
        out.status.success(),
        "tmux new-session: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    // View 1: files, contexts, users, where each came from.
    let screen = tmux.wait_screen("view 1", |s| s.contains("Contexts (1)"));
    assert!(
        screen.contains("✓ loaded") && screen.contains("kubeadm.yaml"),
        "{screen}"
    );
    assert!(
        screen.contains("*● kubernetes-admin@kubernetes"),
        "{screen}"
    );
    assert!(
        screen.contains("client-certificate-data: DATA+OMITTED"),
        "{screen}"
    );

    // View 2: the chain of trust, or its error state while pki::inspect is not built yet.
    tmux.keys(&["2"]);
    let screen = tmux.wait_screen("view 2", |s| s.contains("Chain of trust"));
    let tree = screen.contains("CN=kubernetes-admin") && screen.contains("CN=kubernetes");
    let error_state = screen.contains("✗ Cannot inspect the credentials");
    assert!(tree || error_state, "{screen}");
    if tree {
        assert!(screen.contains("client certificate"), "{screen}");
        assert!(screen.contains("expires in"), "{screen}");
    }

    // Help: every key of the contract.
    tmux.keys(&["?"]);
    let screen = tmux.wait_screen("help", |s| s.contains("Keys — Esc or ? closes"));
    for key in [
        "q / Ctrl-C",
        "Tab",
        "Shift-Tab",
        "↑/k",
        "↓/j",
        "Enter",
        "Space/n",
        "Backspace/p",
        "Esc",
    ] {
        assert!(screen.contains(key), "help lacks {key}:\n{screen}");
    }
    tmux.keys(&["Escape"]);
    tmux.wait_screen("help closed", |s| !s.contains("Keys — Esc"));

    // Views 3-5 are honest placeholders.
    tmux.keys(&["5"]);
    tmux.wait_screen("view 5", |s| s.contains("issues 3 and 5"));

    tmux.keys(&["q"]);
    let screen = tmux.wait_screen("kexplore to exit", |s| s.contains("kexplore exited"));
    assert!(screen.contains("kexplore exited with status 0"), "{screen}");
    assert!(
        !screen.contains("Chain of trust") && !screen.contains("Contexts ("),
        "the alternate screen is gone:\n{screen}"
    );
    let modes = tmux.text(&[
        "display-message",
        "-p",
        "-t",
        "kx",
        "#{alternate_on} #{mouse_any_flag} #{mouse_button_flag} #{mouse_sgr_flag} #{cursor_flag}",
    ]);
    // While the UI runs these read "1 1 0 1 0": alternate screen, mouse capture (SGR), no cursor.
    assert_eq!(
        modes.trim(),
        "0 0 0 0 1",
        "alternate screen, mouse modes and cursor after exit"
    );
    // Raw mode is off: the shell's `read` sees a line only because the tty is cooked again.
    tmux.keys(&["Enter"]);
    let dead = tmux.wait_for(
        "the pane to end",
        |t| {
            t.text(&[
                "display-message",
                "-p",
                "-t",
                "kx",
                "#{pane_dead} #{pane_dead_status}",
            ])
        },
        |s| s.trim().starts_with('1'),
    );
    // tmux can mark the pane dead before it has reaped the process; the status, when known, is 0.
    assert!(matches!(dead.trim(), "1" | "1 0"), "pane: {dead}");
}
