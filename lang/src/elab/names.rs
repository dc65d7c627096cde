//! Names as the elaborator compares them: a module path in its canonical spelling ([`canonical`]), the canonical
//! paths of the modules lang registers builtins in ([`TL`], [`LIBDEVICE`]...), the modules only AMD GPUs have
//! ([`is_amd_path`]), and the known name closest to a mistyped one, for a did-you-mean hint ([`closest`]). Plain
//! functions of strings: they import nothing of the elaborator.

/// Python's builtins (`len`, `range`): reached by bare names, not through an import.
pub const BUILTINS: &str = "builtins";
/// `importlib`, for its `import_module` alone.
pub const IMPORTLIB: &str = "importlib";
/// Python's `math` (its functions of numbers, at compile time).
pub const PY_MATH: &str = "math";
/// Python's `copy` (`copy`, `deepcopy`).
pub const PY_COPY: &str = "copy";
/// `triton` (host-level: `jit`, `cdiv`, `next_power_of_2`...).
pub const TRITON: &str = "triton";
/// `triton.language` (`tl`; also `tessel.language`).
pub const TL: &str = "triton.language";
/// The methods of `tl.tensor` that are no `tl` function (`x.to(...)`): reached through a tensor, not an import.
pub const TENSOR: &str = "triton.language.tensor";
/// `triton.language.math` (`tl.math`).
pub const MATH: &str = "triton.language.math";
/// `triton.language.extra`: a package of modules only.
pub const EXTRA: &str = "triton.language.extra";
/// `triton.language.extra.libdevice` (and `tl.extra.cuda.libdevice`).
pub const LIBDEVICE: &str = "triton.language.extra.libdevice";
/// `triton.language.extra.cuda`'s own functions (`globaltimer`, `smid`...). No path reaches it: [`canonical`]
/// makes `tl.extra.cuda` libdevice's path, and libdevice has these functions too.
pub const CUDA: &str = "triton.language.extra.cuda";
/// `triton.experimental`: a package of modules only.
pub const EXPERIMENTAL: &str = "triton.experimental";
/// `triton.experimental.gluon` (host-level: `jit`, `aggregate`...).
pub const GLUON: &str = "triton.experimental.gluon";
/// `triton.experimental.gluon.language` (`gl`). Its members and its submodules' run only in `@gluon.jit` kernels
/// ([`in_gluon_language`]), but those it has from `tl` run anywhere.
pub const GL: &str = "triton.experimental.gluon.language";
/// `tessel` (`tessel.jit`, and `tl`'s names).
pub const TESSEL: &str = "tessel";

/// Whether `path` (canonical) is Gluon's language module or one of its submodules, whose members run only in
/// `@gluon.jit` kernels.
pub fn in_gluon_language(path: &str) -> bool {
    path == GL || path.strip_prefix(GL).is_some_and(|r| r.starts_with('.'))
}

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
