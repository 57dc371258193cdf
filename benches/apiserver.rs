//! Load generator for the embedded API server, run from a second process over mTLS on
//! loopback: `cargo bench --bench apiserver` (release). It starts `kexplore serve`, then
//! measures new mTLS handshakes per second, keep-alive GETs of a 100-pod list per second,
//! pod creates per second, and 1,000 concurrent watchers receiving every event. When nginx is
//! installed it serves the same list JSON over mTLS with the same certificates, and the same
//! handshake and GET loads run against it for a ratio. Results go to stdout as a Markdown table
//! (docs/BENCHMARKS.md records a run).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use serde_json::{Value, json};

const SECS: u64 = 5;

struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        // SIGTERM first: nginx's master then stops its workers (SIGKILL would orphan them).
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        for _ in 0..50 {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

struct Pki {
    dir: std::path::PathBuf,
}

impl Pki {
    fn read(&self, f: &str) -> Vec<u8> {
        std::fs::read(self.dir.join(f)).unwrap_or_default()
    }
}

fn tls_config(pki: &Pki) -> rustls::ClientConfig {
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(&pki.read("ca.crt")).flatten() {
        let _ = roots.add(c);
    }
    let chain: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(&pki.read("admin.crt"))
            .flatten()
            .collect();
    let key = PrivateKeyDer::from_pem_slice(&pki.read("admin.key")).expect("admin key");
    let mut cfg = rustls::ClientConfig::builder()
        .with_root_certificates(roots)
        .with_client_auth_cert(chain, key)
        .expect("client config");
    // Every connection a full handshake: that is what is being measured.
    cfg.resumption = rustls::client::Resumption::disabled();
    cfg
}

fn http_client(pki: &Pki) -> reqwest::Client {
    let identity = [pki.read("admin.crt"), pki.read("admin.key")].concat();
    reqwest::Client::builder()
        .tls_certs_only(reqwest::Certificate::from_pem_bundle(&pki.read("ca.crt")).expect("ca"))
        .identity(reqwest::Identity::from_pem(&identity).expect("identity"))
        .build()
        .expect("client")
}

/// Full mTLS handshakes per second with `conc` parallel connectors.
async fn handshakes(port: u16, cfg: Arc<rustls::ClientConfig>, conc: usize) -> f64 {
    let count = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(SECS);
    let mut tasks = Vec::new();
    for _ in 0..conc {
        let (cfg, count) = (cfg.clone(), count.clone());
        tasks.push(tokio::spawn(async move {
            let connector = tokio_rustls::TlsConnector::from(cfg);
            while Instant::now() < deadline {
                let Ok(tcp) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else {
                    continue;
                };
                let name = ServerName::try_from("localhost").expect("name");
                if let Ok(mut tls) = connector.connect(name, tcp).await {
                    count.fetch_add(1, Ordering::Relaxed);
                    let _ = tokio::io::AsyncWriteExt::shutdown(&mut tls).await;
                }
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    count.load(Ordering::Relaxed) as f64 / SECS as f64
}

/// The TLS version and cipher suite the server at `port` chooses for this client.
async fn negotiated(port: u16, cfg: Arc<rustls::ClientConfig>) -> String {
    let Ok(tcp) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else {
        return "no connection".into();
    };
    let name = ServerName::try_from("localhost").expect("name");
    match tokio_rustls::TlsConnector::from(cfg)
        .connect(name, tcp)
        .await
    {
        Ok(tls) => format!(
            "{:?}",
            tls.get_ref().1.negotiated_cipher_suite().map(|s| s.suite())
        ),
        Err(e) => format!("handshake failed: {e}"),
    }
}

/// Requests per second of `make` over `clients` keep-alive clients × `per` tasks each.
async fn rate<F, Fut>(clients: &[reqwest::Client], per: usize, make: F) -> f64
where
    F: Fn(reqwest::Client, u64) -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = bool> + Send,
{
    let count = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(SECS);
    let seq = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for c in clients {
        for _ in 0..per {
            let (c, count, make, seq) = (c.clone(), count.clone(), make.clone(), seq.clone());
            tasks.push(tokio::spawn(async move {
                while Instant::now() < deadline {
                    if make(c.clone(), seq.fetch_add(1, Ordering::Relaxed)).await {
                        count.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }));
        }
    }
    for t in tasks {
        let _ = t.await;
    }
    count.load(Ordering::Relaxed) as f64 / SECS as f64
}

/// One GET whose whole body arrived with a 2xx. The body is read chunk by chunk and counted
/// rather than gathered into one buffer, as wrk and h2load do: the load generator shares the
/// two cores with the server, and copying 150 KiB per response is its cost, not the server's.
async fn get_ok(c: &reqwest::Client, url: &str) -> bool {
    match c.get(url).send().await {
        Ok(mut r) if r.status().is_success() => {
            let want = r.content_length();
            let mut got = 0u64;
            loop {
                match r.chunk().await {
                    Ok(Some(c)) => got += c.len() as u64,
                    Ok(None) => return want.is_none_or(|w| w == got) && got > 0,
                    Err(_) => return false,
                }
            }
        }
        _ => false,
    }
}

fn start_serve(dir: &std::path::Path) -> (Proc, u16) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kexplore"))
        .args(["serve", "--listen", "127.0.0.1:0", "--pki-dir"])
        .arg(dir.join("pki"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn kexplore serve");
    let mut line = String::new();
    let _ = BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line);
    let port = line
        .trim()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("listening line");
    (Proc(child), port)
}

fn start_nginx(dir: &std::path::Path, pki: &Pki, body: &[u8]) -> Option<(Proc, u16)> {
    let nginx = ["/usr/sbin/nginx", "/usr/local/sbin/nginx"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())?;
    let root = dir.join("www");
    std::fs::create_dir_all(root.join("api/v1/namespaces/default")).ok()?;
    std::fs::write(root.join("api/v1/namespaces/default/pods"), body).ok()?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .ok()?
        .local_addr()
        .ok()?
        .port();
    let conf = format!(
        "daemon off; worker_processes 2; pid {d}/nginx.pid; error_log {d}/error.log;\n\
         events {{ worker_connections 4096; }}\n\
         http {{ access_log off; default_type application/json; client_body_temp_path {d}/tmp; proxy_temp_path {d}/tmp; fastcgi_temp_path {d}/tmp; uwsgi_temp_path {d}/tmp; scgi_temp_path {d}/tmp;\n\
           server {{ listen 127.0.0.1:{port} ssl http2; ssl_certificate {p}/apiserver.crt; ssl_certificate_key {p}/apiserver.key;\n\
             ssl_client_certificate {p}/ca.crt; ssl_verify_client on; ssl_session_cache off; ssl_session_tickets off; keepalive_requests 1000000;\n\
            ssl_protocols TLSv1.2 TLSv1.3; ssl_prefer_server_ciphers on; ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256;\n\
             root {r}; location / {{ }} }} }}\n",
        d = dir.display(),
        p = pki.dir.display(),
        r = root.display()
    );
    std::fs::create_dir_all(dir.join("tmp")).ok()?;
    let conf_path = dir.join("nginx.conf");
    std::fs::write(&conf_path, conf).ok()?;
    let child = Command::new(nginx)
        .arg("-c")
        .arg(&conf_path)
        .arg("-p")
        .arg(dir)
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    std::thread::sleep(Duration::from_millis(500));
    Some((Proc(child), port))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().expect("tempdir");
    let (_serve, port) = start_serve(dir.path());
    let pki = Pki {
        dir: dir.path().join("pki"),
    };
    let base = format!("https://127.0.0.1:{port}");
    let clients: Vec<reqwest::Client> = (0..8).map(|_| http_client(&pki)).collect();

    // 100 pods in default for the list (a scheduler name nobody serves keeps them still).
    for i in 0..100 {
        let body = json!({"apiVersion":"v1","kind":"Pod","metadata":{"name": format!("list-{i}")},"spec":{"schedulerName":"none","containers":[{"name":"c","image":"pause:3.10"}]}});
        let _ = clients[0]
            .post(format!("{base}/api/v1/namespaces/default/pods"))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await;
    }
    let list_body = clients[0]
        .get(format!("{base}/api/v1/namespaces/default/pods"))
        .send()
        .await
        .expect("list")
        .bytes()
        .await
        .expect("body");

    let cfg = Arc::new(tls_config(&pki));
    let hs = handshakes(port, cfg.clone(), 16).await;
    let url = format!("{base}/api/v1/namespaces/default/pods");
    let gets = rate(&clients, 16, move |c, _| {
        let url = url.clone();
        async move { get_ok(&c, &url).await }
    })
    .await;
    let curl = format!("{base}/api/v1/namespaces/bench/pods");
    let _ = clients[0]
        .post(format!("{base}/api/v1/namespaces"))
        .header("content-type", "application/json")
        .body(r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"bench"}}"#)
        .send()
        .await;
    let creates = rate(&clients, 16, move |c, n| {
        let url = curl.clone();
        async move {
            let body = json!({"apiVersion":"v1","kind":"Pod","metadata":{"name": format!("p-{n}")},"spec":{"schedulerName":"none","containers":[{"name":"c","image":"pause:3.10"}]}});
            matches!(c.post(&url).header("content-type", "application/json").body(body.to_string()).send().await, Ok(r) if r.status().as_u16() == 201)
        }
    })
    .await;

    // 1,000 watchers over 8 connections, then 200 creates: time until all saw all.
    let _ = clients[0]
        .post(format!("{base}/api/v1/namespaces"))
        .header("content-type", "application/json")
        .body(r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"watched"}}"#)
        .send()
        .await;
    let list: Value = clients[0]
        .get(format!("{base}/api/v1/namespaces/watched/pods"))
        .send()
        .await
        .expect("list")
        .json()
        .await
        .expect("json");
    let start_rv = list
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or("0")
        .to_string();
    const WATCHERS: usize = 1000;
    const EVENTS: usize = 200;
    let complete = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for w in 0..WATCHERS {
        let c = clients[w % clients.len()].clone();
        let url = format!(
            "{base}/api/v1/namespaces/watched/pods?watch=true&resourceVersion={start_rv}&timeoutSeconds=120"
        );
        let complete = complete.clone();
        tasks.push(tokio::spawn(async move {
            let Ok(mut r) = c.get(url).send().await else {
                return false;
            };
            let mut lines = 0usize;
            let mut last_rv = 0u64;
            let mut in_order = true;
            let mut buf = Vec::new();
            while lines < EVENTS {
                let Ok(Ok(Some(chunk))) =
                    tokio::time::timeout(Duration::from_secs(60), r.chunk()).await
                else {
                    return false;
                };
                buf.extend_from_slice(&chunk);
                while let Some(pos) = buf.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = buf.drain(..=pos).collect();
                    let ev: Value = serde_json::from_slice(&line).unwrap_or_default();
                    let rv: u64 = ev
                        .pointer("/object/metadata/resourceVersion")
                        .and_then(Value::as_str)
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(0);
                    in_order &= rv > last_rv;
                    last_rv = rv;
                    lines += 1;
                }
            }
            complete.fetch_add(1, Ordering::Relaxed);
            in_order
        }));
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    // The writer has its own connection, so its requests do not queue behind watch traffic.
    let writer = http_client(&pki);
    let t0 = Instant::now();
    let mut writes = Vec::new();
    for chunk in 0..(EVENTS / 20) {
        let (writer, base) = (writer.clone(), base.clone());
        writes.push(tokio::spawn(async move {
            for i in chunk * 20..chunk * 20 + 20 {
                let body = json!({"apiVersion":"v1","kind":"Pod","metadata":{"name": format!("w-{i}")},"spec":{"schedulerName":"none","containers":[{"name":"c","image":"pause:3.10"}]}});
                let _ = writer.post(format!("{base}/api/v1/namespaces/watched/pods")).header("content-type", "application/json").body(body.to_string()).send().await;
            }
        }));
    }
    for w in writes {
        let _ = w.await;
    }
    let write_secs = t0.elapsed().as_secs_f64();
    let mut ordered = 0;
    for t in tasks {
        if t.await.unwrap_or(false) {
            ordered += 1;
        }
    }
    let watch_secs = t0.elapsed().as_secs_f64();

    // nginx, same JSON, same certificates, same loads.
    let ngx = start_nginx(dir.path(), &pki, &list_body);
    let ours_suite = negotiated(port, cfg.clone()).await;
    let ngx_suite = match &ngx {
        Some((_, nport)) => negotiated(*nport, cfg.clone()).await,
        None => "-".into(),
    };
    let (ngx_hs, ngx_gets) = match &ngx {
        Some((_, nport)) => {
            let hs = handshakes(*nport, cfg.clone(), 16).await;
            let nclients: Vec<reqwest::Client> = (0..8).map(|_| http_client(&pki)).collect();
            let url = format!("https://127.0.0.1:{nport}/api/v1/namespaces/default/pods");
            let gets = rate(&nclients, 16, move |c, _| {
                let url = url.clone();
                async move { get_ok(&c, &url).await }
            })
            .await;
            (Some(hs), Some(gets))
        }
        None => (None, None),
    };
    let ratio = |a: f64, b: Option<f64>| {
        b.map(|b| format!("{:.2}", a / b))
            .unwrap_or_else(|| "n/a".into())
    };
    let fmt = |b: Option<f64>| {
        b.map(|b| format!("{b:.0}"))
            .unwrap_or_else(|| "not installed".into())
    };
    println!("| measure | kexplore serve | nginx (same JSON, mTLS) | kexplore / nginx |");
    println!("|---|---|---|---|");
    println!(
        "| new mTLS handshakes/s (16 connectors) | {hs:.0} | {} | {} |",
        fmt(ngx_hs),
        ratio(hs, ngx_hs)
    );
    println!(
        "| GET 100-pod list/s (8 keep-alive h2 clients x 16) | {gets:.0} | {} | {} |",
        fmt(ngx_gets),
        ratio(gets, ngx_gets)
    );
    println!("| cipher suite chosen by the server | {ours_suite} | {ngx_suite} | - |");
    println!("| pod creates/s (8 clients x 16) | {creates:.0} | - | - |");
    println!(
        "| {WATCHERS} watchers x {EVENTS} creates | {ordered}/{WATCHERS} watchers saw all {EVENTS} events in order; writes took {write_secs:.2}s, last delivery at {watch_secs:.2}s ({:.0} events/s delivered) | - | - |",
        (ordered * EVENTS) as f64 / watch_secs
    );
}
