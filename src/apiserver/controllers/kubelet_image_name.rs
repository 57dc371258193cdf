//! Whether a container's image is a reference at all, as the kubelet's image manager finds out
//! before pulling (`applyDefaultImageTag`, which parses it with the distribution project's
//! `ParseNormalizedNamed`). The API server takes any image without surrounding spaces, so
//! `image: Nginx` is stored and the pod is scheduled; its kubelet then leaves the container
//! waiting with `InvalidImageName`, saying why in the reference grammar's words.

/// A container's waiting reason when its image cannot be parsed.
pub(crate) const INVALID_IMAGE_NAME: &str = "InvalidImageName";
/// The Warning event the image manager records then (`events.FailedToInspectImage`).
pub(crate) const INSPECT_FAILED: &str = "InspectFailed";

const DOCKER_DOMAIN: &str = "docker.io";
/// The most a repository path may hold (`NameTotalLengthMax`).
const PATH_MAX: usize = 255;

/// The kubelet's message for an image it cannot parse; `None` for a valid reference.
pub(crate) fn invalid_image_message(image: &str) -> Option<String> {
    let why = parse_normalized(image).err()?;
    Some(format!(
        "Failed to apply default image tag {image:?}: couldn't parse image name {image:?}: {why}"
    ))
}

/// `ParseNormalizedNamed`: a familiar name (`nginx`, `me/app:1`) completed with Docker Hub's
/// domain and `library/`, then parsed whole.
fn parse_normalized(s: &str) -> Result<(), String> {
    if s.len() == 64 && s.bytes().all(|b| matches!(b, b'a'..=b'f' | b'0'..=b'9')) {
        return Err(format!(
            "invalid repository name ({s}), cannot specify 64-byte hexadecimal strings"
        ));
    }
    let (domain, remainder) = split_docker_domain(s);
    let remote = remainder.split(':').next().unwrap_or_default();
    if remote.to_lowercase() != remote {
        return Err(format!(
            "invalid reference format: repository name ({remote}) must be lowercase"
        ));
    }
    parse(&format!("{domain}/{remainder}"))
}

fn split_docker_domain(name: &str) -> (&str, String) {
    let (domain, remainder) = match name.split_once('/') {
        Some((first, rest))
            if first.contains(['.', ':'])
                || first == "localhost"
                || first.to_lowercase() != first =>
        {
            (first, rest)
        }
        _ => (DOCKER_DOMAIN, name),
    };
    let domain = if domain == "index.docker.io" {
        DOCKER_DOMAIN
    } else {
        domain
    };
    let remainder = if domain == DOCKER_DOMAIN && !remainder.contains('/') {
        format!("library/{remainder}")
    } else {
        remainder.to_string()
    };
    (domain, remainder)
}

/// `Parse`: the reference grammar, `name[:tag][@digest]`.
fn parse(s: &str) -> Result<(), String> {
    let Some(path_len) = matches(s) else {
        return Err(if s.is_empty() {
            "repository name must have at least one component".into()
        } else if matches(&s.to_lowercase()).is_some() {
            "invalid reference format: repository name must be lowercase".into()
        } else {
            "invalid reference format".into()
        });
    };
    if path_len > PATH_MAX {
        return Err(format!(
            "repository name must not be more than {PATH_MAX} characters"
        ));
    }
    if let Some((_, digest)) = s.split_once('@') {
        digest_valid(digest)?;
    }
    Ok(())
}

/// Whether `s` matches the whole reference grammar; the repository path's length if it does.
fn matches(s: &str) -> Option<usize> {
    let (rest, digest) = match s.split_once('@') {
        Some((rest, digest)) => (rest, Some(digest)),
        None => (s, None),
    };
    if digest.is_some_and(|d| !digest_shaped(d)) {
        return None;
    }
    // A colon followed by no slash starts the tag; one followed by a slash is a port.
    let (name, tag) = match rest.rsplit_once(':') {
        Some((name, tag)) if !tag.contains('/') => (name, Some(tag)),
        _ => (rest, None),
    };
    if tag.is_some_and(|t| !tag_valid(t)) {
        return None;
    }
    let segments: Vec<&str> = name.split('/').collect();
    if segments.iter().all(|c| path_component(c)) {
        // Read as the grammar reads it: the first segment is the domain when it can be one.
        let with_domain = segments.len() > 1 && domain_and_port(segments[0]);
        let skip = usize::from(with_domain);
        return Some(segments[skip..].join("/").len());
    }
    if segments.len() > 1
        && domain_and_port(segments[0])
        && segments[1..].iter().all(|c| path_component(c))
    {
        return Some(name.len() - segments[0].len() - 1);
    }
    None
}

/// `[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*`
fn path_component(c: &str) -> bool {
    let b = c.as_bytes();
    let alnum = |x: u8| x.is_ascii_lowercase() || x.is_ascii_digit();
    let mut i = 0;
    let run = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && alnum(b[*i]) {
            *i += 1;
        }
        *i > start
    };
    if !run(&mut i) {
        return false;
    }
    while i < b.len() {
        match b[i] {
            b'.' => i += 1,
            b'_' if b.get(i + 1) == Some(&b'_') => i += 2,
            b'_' => i += 1,
            b'-' => {
                while i < b.len() && b[i] == b'-' {
                    i += 1;
                }
            }
            _ => return false,
        }
        if !run(&mut i) {
            return false;
        }
    }
    true
}

/// `host(:port)?`: a dotted name of `[a-zA-Z0-9-]` labels, or a bracketed IPv6 address.
fn domain_and_port(d: &str) -> bool {
    let (host, port) = if d.starts_with('[') {
        match d.find(']') {
            Some(end) => {
                let inner = &d[1..end];
                if inner.is_empty() || !inner.bytes().all(|b| b.is_ascii_hexdigit() || b == b':') {
                    return false;
                }
                (&d[..=end], d[end + 1..].strip_prefix(':'))
            }
            None => return false,
        }
    } else {
        match d.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (d, None),
        }
    };
    if d.starts_with('[') {
        if !d[host.len()..].is_empty() && port.is_none() {
            return false;
        }
    } else if !host.split('.').all(domain_component) {
        return false;
    }
    port.is_none_or(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// `[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]`
fn domain_component(c: &str) -> bool {
    let b = c.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter().all(|x| x.is_ascii_alphanumeric() || *x == b'-')
}

/// `[\w][\w.-]{0,127}`
fn tag_valid(t: &str) -> bool {
    let word = |x: &u8| x.is_ascii_alphanumeric() || *x == b'_';
    let b = t.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && word(&b[0])
        && b[1..].iter().all(|x| word(x) || *x == b'.' || *x == b'-')
}

/// `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}`
fn digest_shaped(d: &str) -> bool {
    let Some((algorithm, hex)) = d.split_once(':') else {
        return false;
    };
    let component = |c: &str| {
        let b = c.as_bytes();
        !b.is_empty() && b[0].is_ascii_alphabetic() && b.iter().all(u8::is_ascii_alphanumeric)
    };
    algorithm.split(['-', '_', '+', '.']).all(component)
        && hex.len() >= 32
        && hex.bytes().all(|b| b.is_ascii_hexdigit())
}

/// go-digest's `Validate` for a digest the grammar accepted: a known algorithm and its length.
fn digest_valid(d: &str) -> Result<(), String> {
    let (algorithm, hex) = d.split_once(':').unwrap_or((d, ""));
    let length = match algorithm {
        "sha256" => 64,
        "sha384" => 96,
        "sha512" => 128,
        _ => return Err("unsupported digest algorithm".into()),
    };
    if hex.len() != length {
        return Err("invalid checksum digest length".into());
    }
    if !hex
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err("invalid checksum digest format".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every reference the kubelet pulls in the demo, the scenarios and the usual manifests.
    #[test]
    fn images_people_use_are_valid() {
        for image in [
            "nginx",
            "nginx:1.27",
            "nginx:latest",
            "library/nginx",
            "docker.io/library/nginx:1.27-alpine",
            "index.docker.io/nginx",
            "registry.k8s.io/pause:3.9",
            "registry.cn-hangzhou.aliyuncs.com/kube-easy/app:latest",
            "localhost:5000/me/app:v1",
            "localhost/app",
            "127.0.0.1:5000/app",
            "[::1]:5000/app:dev",
            "ghcr.io/my_org/my__app/with-many---dashes.x:V1_2.3-rc",
            "busybox@sha256:7cc4b5aefd1d0cadf8d97d4350462ba51c694ebca145b08d7d41b41acc8db5aa",
            "busybox:1.36@sha256:7cc4b5aefd1d0cadf8d97d4350462ba51c694ebca145b08d7d41b41acc8db5aa",
            "Registry.Example.com/app",
        ] {
            assert_eq!(invalid_image_message(image), None, "{image}");
        }
    }

    /// The messages as kubelets print them (reported in `kubectl describe` output and bug
    /// reports: uppercase names, a template placeholder, a `ko://` URL, a trailing slash).
    #[test]
    fn what_the_kubelet_refuses_and_how_it_says_so() {
        let cases = [
            (
                "Nginx",
                "invalid reference format: repository name (library/Nginx) must be lowercase",
            ),
            (
                "hfhugs/unsloth-gemma-3-4b-it-GGUF:Q4_K_XL",
                "invalid reference format: repository name (hfhugs/unsloth-gemma-3-4b-it-GGUF) must be lowercase",
            ),
            (
                "ghcr.io/${{ github.repository }}:latest",
                "invalid reference format",
            ),
            (
                "ko://github.com/tektoncd/operator/cmd/kubernetes/webhook",
                "invalid reference format",
            ),
            (
                "registry.hub.docker.com/library//nginx:latest",
                "invalid reference format",
            ),
            (":sha-0b293ab", "invalid reference format"),
            ("nginx:1.2:3", "invalid reference format"),
            ("nginx:-bad", "invalid reference format"),
            (
                "my.registry/App",
                "invalid reference format: repository name (App) must be lowercase",
            ),
            ("nginx@sha256:abc", "invalid reference format"),
            (
                "nginx@sha256:0123456789abcdef0123456789abcdef",
                "invalid checksum digest length",
            ),
            (
                "nginx@md5:0123456789abcdef0123456789abcdef",
                "unsupported digest algorithm",
            ),
            (
                "7cc4b5aefd1d0cadf8d97d4350462ba51c694ebca145b08d7d41b41acc8db5aa",
                "invalid repository name (7cc4b5aefd1d0cadf8d97d4350462ba51c694ebca145b08d7d41b41acc8db5aa), cannot specify 64-byte hexadecimal strings",
            ),
        ];
        for (image, why) in cases {
            assert_eq!(
                invalid_image_message(image),
                Some(format!(
                    "Failed to apply default image tag {image:?}: couldn't parse image name {image:?}: {why}"
                )),
                "{image}"
            );
        }
        let long = format!("me/{}", "a".repeat(300));
        assert_eq!(
            parse_normalized(&long),
            Err("repository name must not be more than 255 characters".into())
        );
    }
}
