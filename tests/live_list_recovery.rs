//! A list of a live cluster that fails halfway finishes anyway and says how: a continue token
//! the server's history no longer reaches (410 Expired) lists again from the start; a
//! connection dropped between pages asks for the same page again. Either way every pod comes
//! once, and the progress reports carry the note view 5 shows.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use k8s_openapi::api::core::v1::Pod;
use kexplore::apiserver::filters::authn::TokenFile;
use kexplore::apiserver::storage::store::HistoryLimits;
use kexplore::apiserver::transport::limits::Limits;
use kexplore::apiserver::transport::pki::{self, ClusterPki};
use kexplore::apiserver::transport::server::{self, Running, ServeOptions};
use kexplore::client::cluster::{ListProgress, list_paged};
use kexplore::client::http::ApiClient;
use kexplore::kubeconfig::{Kubeconfig, ResolvedContext};
use tokio::net::{TcpListener, TcpStream};

async fn start(pki: &ClusterPki, history: HistoryLimits) -> Running {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let opts = ServeOptions {
        listen: "127.0.0.1:0".parse().expect("addr"),
        pki: pki.clone(),
        tokens: TokenFile::default(),
        audit_log: None,
        demo: false,
        scenarios: vec![],
        control_loops: false,
        service_account_issuer: None,
        simulated_run: kexplore::apiserver::request::context::DEFAULT_SIMULATED_RUN,
        scheduler_profiles: None,
    };
    let limits = Limits {
        history,
        ..Limits::default()
    };
    server::start_with_limits(opts, limits)
        .await
        .expect("server starts")
}

fn context(pki: &ClusterPki, addr: SocketAddr, dir: &tempfile::TempDir) -> ResolvedContext {
    let kc = dir.path().join(format!("kubeconfig-{}", addr.port()));
    std::fs::write(&kc, pki::kubeconfig_yaml(pki, &format!("https://{addr}"))).expect("write");
    Kubeconfig::load_file(&kc)
        .expect("load")
        .resolve(None)
        .expect("resolve")
}

async fn create_pods(api: &ApiClient, names: &[String]) {
    for n in names {
        let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": n, "namespace": "default"},
            "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "i"}]}});
        let r = api
            .send(
                reqwest::Method::POST,
                "/api/v1/namespaces/default/pods",
                Some((serde_json::to_vec(&pod).expect("json"), "application/json")),
            )
            .await
            .expect("POST");
        assert_eq!(r.status, 201, "{n}");
    }
}

/// Writes from inside a progress report (which cannot await): on a thread of its own, with a
/// client of its own.
fn create_pods_now(ctx: &ResolvedContext, names: Vec<String>) {
    let ctx = ctx.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let api = ApiClient::connect(&ctx).await.expect("connect");
            create_pods(&api, &names).await;
        });
    })
    .join()
    .expect("writer");
}

fn names(range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("p{i:02}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_continue_token_lists_again_from_the_start_and_says_so() {
    let pki = pki::mint().expect("pki");
    let srv = start(
        &pki,
        HistoryLimits {
            max_events: 5,
            max_bytes: usize::MAX,
        },
    )
    .await;
    let dir = tempfile::tempdir().expect("dir");
    let ctx = context(&pki, srv.addr, &dir);
    let api = ApiClient::connect(&ctx).await.expect("connect");
    create_pods(&api, &names(0..4)).await;
    let mut reports: Vec<ListProgress> = Vec::new();
    let listed = list_paged::<Pod, _>(
        &api,
        "/api/v1/namespaces/default/pods",
        2,
        |p| {
            // After the first page, more changes than the server's history keeps: the token
            // for page two now names a revision it can no longer show.
            if reports.is_empty() {
                create_pods_now(&ctx, names(4..10));
            }
            reports.push(p.clone());
        },
        |p| p,
    )
    .await
    .expect("the list finishes");
    let got: Vec<String> = listed
        .items
        .iter()
        .filter_map(|p| p.metadata.name.clone())
        .collect();
    assert_eq!(got, names(0..10), "every pod once, in order");
    // Page one counted 4 (2 listed, remainingItemCount 2); the relist starts the count over.
    assert_eq!((reports[0].loaded, reports[0].total), (2, Some(4)));
    assert_eq!(reports[0].note, None);
    let note = "the continue token expired after 2 items (410 Gone): listed again from the start";
    assert_eq!(reports[1].note.as_deref(), Some(note), "{reports:?}");
    assert_eq!((reports[1].loaded, reports[1].total), (2, Some(10)));
    let last = reports.last().expect("reports");
    assert!(last.done);
    assert_eq!((last.loaded, last.total), (10, Some(10)));
    srv.shutdown().await;
}

/// A TCP relay in front of the server. Told to cut (`cut`), it closes every open connection
/// and refuses the next one: a connection dropped between two pages of a list, and the
/// reconnection failing too. `open` counts the connections it relays.
async fn relay(
    upstream: SocketAddr,
    mut cut: tokio::sync::watch::Receiver<u32>,
    open: Arc<AtomicUsize>,
) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (kill, _) = tokio::sync::broadcast::channel::<()>(4);
    tokio::spawn(async move {
        let mut refuse = 0;
        loop {
            tokio::select! {
                changed = cut.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    let _ = kill.send(());
                    refuse = 1;
                }
                accepted = listener.accept() => {
                    let Ok((mut inbound, _)) = accepted else { return };
                    if refuse > 0 {
                        refuse -= 1;
                        drop(inbound);
                        continue;
                    }
                    let mut killed = kill.subscribe();
                    let open = open.clone();
                    open.fetch_add(1, Ordering::SeqCst);
                    tokio::spawn(async move {
                        if let Ok(mut out) = TcpStream::connect(upstream).await {
                            tokio::select! {
                                _ = tokio::io::copy_bidirectional(&mut inbound, &mut out) => {}
                                _ = killed.recv() => {}
                            }
                        }
                        open.fetch_sub(1, Ordering::SeqCst);
                    });
                }
            }
        }
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_dropped_between_pages_resumes_from_the_last_page_and_says_so() {
    let pki = pki::mint().expect("pki");
    let srv = start(&pki, HistoryLimits::default()).await;
    let dir = tempfile::tempdir().expect("dir");
    let direct = context(&pki, srv.addr, &dir);
    create_pods(
        &ApiClient::connect(&direct).await.expect("connect"),
        &names(0..6),
    )
    .await;
    let (cut, cut_rx) = tokio::sync::watch::channel(0u32);
    let open = Arc::new(AtomicUsize::new(0));
    let front = relay(srv.addr, cut_rx, open.clone()).await;
    let api = ApiClient::connect(&context(&pki, front, &dir))
        .await
        .expect("connect through the relay");
    let mut reports: Vec<ListProgress> = Vec::new();
    let listed = list_paged::<Pod, _>(
        &api,
        "/api/v1/namespaces/default/pods",
        2,
        |p| {
            if reports.is_empty() {
                // Page one is in; every connection is cut before page two is asked for.
                let _ = cut.send(1);
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
                while open.load(Ordering::SeqCst) > 0 && std::time::Instant::now() < deadline {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                assert_eq!(
                    open.load(Ordering::SeqCst),
                    0,
                    "the relay cut its connections"
                );
            }
            reports.push(p.clone());
        },
        |p| p,
    )
    .await
    .expect("the list finishes");
    let got: Vec<String> = listed
        .items
        .iter()
        .filter_map(|p| p.metadata.name.clone())
        .collect();
    assert_eq!(got, names(0..6), "every pod once, in order");
    let noted = reports
        .iter()
        .filter_map(|r| r.note.as_deref())
        .next()
        .unwrap_or_default()
        .to_string();
    assert!(
        noted.starts_with("connection dropped after 2 items (")
            && noted.ends_with("): resumed from the last page"),
        "{reports:?}"
    );
    // Resumed, not restarted: the count never went back.
    assert!(
        reports.windows(2).all(|w| w[0].loaded <= w[1].loaded),
        "{reports:?}"
    );
    assert_eq!(listed.pages, 3);
    srv.shutdown().await;
}
