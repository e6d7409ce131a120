//! The C++11 peers of the suites, built from Slice files and C++ sources
//! with slice2cpp and g++ against Debian's `libIce++11`, once per stamp, in
//! a directory of the target directory.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::paths::target_dir;
use crate::tool::{run_parallel, run_tool};

/// The compiler flags of every C++ peer (Ice's C++11 mapping).
const CXXFLAGS: &[&str] = &["-std=c++11", "-DICE_CPP11_MAPPING", "-O1", "-w"];

/// The libraries every C++ peer links.
const LIBS: &[&str] = &["-lIce++11", "-lpthread"];

/// What to build: Slice files, C++ sources and the programs linked from
/// their objects.
///
/// The stamp hashes the Slice and C++ sources, the flags and slice2cpp's
/// version; a build with an unchanged stamp reuses the programs. Each build
/// happens in a private directory and the programs are renamed into place,
/// so that concurrent test processes never see half-written files.
pub struct CppBuild<'a> {
    /// The directory under the target directory (`interop-cpp`).
    pub dir: &'a str,
    /// slice2cpp's include directory.
    pub include: &'a Path,
    /// The Slice files, each compiled to `<stem>.cpp` and `<stem>.o`.
    pub slices: &'a [PathBuf],
    /// The C++ sources, each compiled to `<stem>.o`.
    pub sources: &'a [PathBuf],
    /// The programs: each name with the stems of the objects it links.
    pub programs: &'a [(&'a str, &'a [&'a str])],
}

impl CppBuild<'_> {
    /// Builds the programs unless the stamp shows them built; the directory
    /// that holds them (`<target>/<dir>/<program>`).
    pub fn build(&self) -> Result<PathBuf, String> {
        let out = target_dir().join(self.dir);
        std::fs::create_dir_all(&out).map_err(|e| format!("create {}: {e}", out.display()))?;
        let version = Command::new("slice2cpp")
            .arg("--version")
            .output()
            .map_err(|e| {
                format!(
                    "cannot run slice2cpp ({e}); install zeroc-ice-compilers and \
                     libzeroc-ice-dev (or set FLOE_NO_INTEROP=1 to skip)"
                )
            })?;
        let mut hasher = DefaultHasher::new();
        version.stdout.hash(&mut hasher);
        version.stderr.hash(&mut hasher);
        CXXFLAGS.hash(&mut hasher);
        LIBS.hash(&mut hasher);
        for file in self.slices.iter().chain(self.sources) {
            let text = std::fs::read(file).map_err(|e| format!("read {}: {e}", file.display()))?;
            file.file_name().hash(&mut hasher);
            text.hash(&mut hasher);
        }
        let stamp = format!("{:016x}", hasher.finish());
        let stamp_file = out.join("stamp");
        if std::fs::read_to_string(&stamp_file).is_ok_and(|s| s.trim() == stamp)
            && self.programs.iter().all(|(p, _)| out.join(p).exists())
        {
            return Ok(out);
        }

        let work = out.join(format!("build-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir_all(&work).map_err(|e| format!("create {}: {e}", work.display()))?;
        println!("building C++ peers in {}", work.display());
        run_tool(
            Command::new("slice2cpp")
                .arg(format!("-I{}", self.include.display()))
                .arg("--output-dir")
                .arg(&work)
                .args(self.slices),
        )?;
        let compile = |source: &Path| {
            let mut cmd = Command::new("g++");
            cmd.args(CXXFLAGS)
                .arg(format!("-I{}", work.display()))
                .arg("-c")
                .arg(source)
                .arg("-o")
                .arg(work.join(stem(source)).with_extension("o"));
            cmd
        };
        let generated: Vec<PathBuf> = self
            .slices
            .iter()
            .map(|s| work.join(stem(s)).with_extension("cpp"))
            .collect();
        run_parallel(
            generated
                .iter()
                .chain(self.sources)
                .map(|s| compile(s))
                .collect(),
        )?;
        let link = |(program, objects): &(&str, &[&str])| {
            let mut cmd = Command::new("g++");
            cmd.arg("-o").arg(work.join(program));
            for o in *objects {
                cmd.arg(work.join(format!("{o}.o")));
            }
            cmd.args(LIBS);
            cmd
        };
        run_parallel(self.programs.iter().map(link).collect())?;
        for (program, _) in self.programs {
            std::fs::rename(work.join(program), out.join(program))
                .map_err(|e| format!("install {program}: {e}"))?;
        }
        std::fs::write(&stamp_file, &stamp).map_err(|e| format!("write the stamp: {e}"))?;
        let _ = std::fs::remove_dir_all(&work);
        Ok(out)
    }
}

/// The file name of `path` without its extension.
fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}
