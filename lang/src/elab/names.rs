//! Names as the elaborator compares them: a module path in its canonical spelling ([`canonical`]), the modules
//! only AMD GPUs have ([`is_amd_path`]), and the known name closest to a mistyped one, for a did-you-mean hint
//! ([`closest`]). Plain functions of strings: they import nothing of the elaborator.

/// The canonical path of a module or module member (aliases of one module map to one name).
pub fn canonical(path: &str) -> String {
    const ALIASES: &[(&str, &str)] = &[
        ("tessel.language", "triton.language"),
        // The Python package's gluon namespace (`tessel.gluon.jit`, `tessel.gluon.language as gl`).
        ("tessel.gluon.language", "triton.experimental.gluon.language"),
        ("tessel.gluon", "triton.experimental.gluon"),
        ("triton.language.core", "triton.language"),
        ("triton.language.standard", "triton.language"),
        ("triton.language.semantic", "triton.language"),
        ("tessel.language.math", "triton.language.math"),
        ("triton.language.extra.cuda.libdevice", "triton.language.extra.libdevice"),
        ("triton.language.extra.cuda", "triton.language.extra.libdevice"),
        ("triton.language.random", "triton.language"),
        ("triton.experimental.gluon.language._core", "triton.experimental.gluon.language"),
        ("triton.experimental.gluon.language._layouts", "triton.experimental.gluon.language"),
        ("triton.experimental.gluon.language._standard", "triton.experimental.gluon.language"),
        ("triton.experimental.gluon.language._math", "triton.experimental.gluon.language"),
        ("triton.runtime.jit", "triton"),
        ("triton.runtime", "triton"),
        ("triton.experimental.gluon._runtime", "triton.experimental.gluon"),
    ];
    for (from, to) in ALIASES {
        if path == *from {
            return to.to_string();
        }
        if let Some(rest) = path.strip_prefix(from).and_then(|r| r.strip_prefix('.')) {
            return format!("{to}.{rest}");
        }
    }
    path.to_string()
}

/// Modules that exist only for AMD GPUs (`tl.extra.hip`, gluon's `amd` with its buffer ops).
const AMD_MODULES: &[&str] = &[
    "triton.language.extra.hip",
    "triton.language.extra.amd",
    "triton.experimental.gluon.language.amd",
    "triton.experimental.gluon.amd",
];

/// Whether `path` (canonical) is an AMD-only module or one of its members.
pub fn is_amd_path(path: &str) -> bool {
    AMD_MODULES.iter().any(|m| path == *m || path.strip_prefix(m).is_some_and(|r| r.starts_with('.')))
}

/// The candidate closest to `name` by edit distance, if it is close enough to be a plausible typo.
pub fn closest<'s>(name: &str, candidates: impl Iterator<Item = &'s str>) -> Option<&'s str> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .filter(|c| *c != name)
        .map(|c| (edit_distance(name, c), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, c)| (d, c.len(), c.to_string()))
        .map(|(_, c)| c)
}

/// Levenshtein distance over chars.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        prev = cur;
    }
    prev[b.len()]
}
