#!/usr/bin/python3
"""What `cmake --install` leaves, and a program of someone else's built against it.

usage: test_install.py install BUILD SOURCE PREFIX
           installs BUILD into an emptied PREFIX and checks the layout: every
           eigstream* program the build made, libeigstream-eig (shared with its
           SONAME, static), <eigstream/eig.h> byte-identical to eig/eig.h, the
           CMake package and the pkg-config module at the project's version,
           the default configuration identical to config/eigstream.cfg, the
           Python package; the shared library exports exactly eig.h's functions
       test_install.py consumer SOURCE PREFIX SCRATCH [SYSROOT]
           builds tests/install/consumer against PREFIX with find_package
           (shared and static targets) and with pkg-config (shared and
           --static), and runs each on the cpu and lapack backends; the
           consumer checks an analytic spectrum. A shared build must load
           PREFIX's library (ldd). SYSROOT: PREFIX is a package's /usr
           unpacked under SYSROOT, whose .pc names /usr (pkg-config --define-variable=prefix=PREFIX).
       test_install.py pip SOURCE PREFIX SCRATCH
           pip-installs tools/python (its pyproject.toml, at the project's
           version) into a fresh venv, offline, and runs test_python_eigh.py
           with the venv's python on PREFIX's library (EIGSTREAM_LIB)
Each failure is printed with what was expected; exit 1 after any.
"""
import filecmp
import glob
import os
import re
import shutil
import subprocess
import sys

from deb_checks import check, failures


def run(args, env=None, cwd=None, timeout=300):
    """Runs a command; a non-zero exit is a failure naming it and its output."""
    r = subprocess.run(args, capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)
    check(r.returncode == 0, f"{' '.join(args)} exited {r.returncode}:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return r


def project_version(source):
    text = open(os.path.join(source, "CMakeLists.txt")).read()
    return re.search(r"project\(eigstream VERSION ([\d.]+)", text).group(1)


def libdir_of(prefix):
    """The folder holding libeigstream-eig.so under prefix (lib or lib/<multiarch>)."""
    found = glob.glob(os.path.join(prefix, "lib*", "libeigstream-eig.so")) + \
        glob.glob(os.path.join(prefix, "lib*", "*", "libeigstream-eig.so"))
    check(len(found) == 1, f"libeigstream-eig.so under {prefix}: {found}")
    return os.path.dirname(found[0]) if found else os.path.join(prefix, "lib")


def header_functions(eig_h):
    """Names of the functions eig.h declares (static inline ones excluded)."""
    text = re.sub(r"/\*.*?\*/", "", open(eig_h).read(), flags=re.S)
    return set(re.findall(r"^(?!static)[A-Za-z_][\w \*]*?\b(eig_\w+)\s*\(", text, flags=re.M))


def check_exports(so, eig_h):
    out = run(["nm", "-D", "--defined-only", so]).stdout
    exported = {line.split()[-1].split("@")[0] for line in out.splitlines()
                if line.split() and line.split()[1] in "TtWiDBR"}
    exported = {e for e in exported if not e.startswith("EIGSTREAM_EIG_")}
    declared = header_functions(eig_h)
    check(declared and exported == declared,
          f"{so} exports {sorted(exported - declared)} beyond eig.h, lacks {sorted(declared - exported)}")


def build_programs(build):
    """Every eigstream or eigstream-NAME executable the build tree holds."""
    names = set()
    for root, dirs, files in os.walk(build):
        dirs[:] = [d for d in dirs if not d.startswith(("_CPack", "CMakeFiles", "tests"))]
        for f in files:
            if re.fullmatch(r"eigstream(-[a-z]+)?", f) and os.access(os.path.join(root, f), os.X_OK):
                names.add(f)
    return names


def install(build, source, prefix):
    shutil.rmtree(prefix, ignore_errors=True)
    run(["cmake", "--install", build, "--prefix", prefix])
    version = project_version(source)
    programs = build_programs(build)
    check("eigstream" in programs, f"no daemon in the build tree {build}")
    for p in sorted(programs):
        check(os.access(os.path.join(prefix, "bin", p), os.X_OK), f"{p} not installed in {prefix}/bin")
    libdir = libdir_of(prefix)
    so = os.path.join(libdir, "libeigstream-eig.so")
    soname = re.search(r"SONAME\)\s+Library soname: \[([^\]]+)\]", run(["readelf", "-d", so]).stdout)
    check(soname and soname.group(1) == "libeigstream-eig.so.2", f"SONAME of {so}: {soname}")
    check(os.path.realpath(so).endswith(f"libeigstream-eig.so.{version}"), f"{so} -> {os.path.realpath(so)}")
    check(os.path.isfile(os.path.join(libdir, "libeigstream-eig.a")), "libeigstream-eig.a not installed")
    check_exports(so, os.path.join(source, "eig", "eig.h"))
    header = os.path.join(prefix, "include", "eigstream", "eig.h")
    check(os.path.isfile(header) and filecmp.cmp(header, os.path.join(source, "eig", "eig.h"), False),
          f"{header} missing or not eig/eig.h")
    check(sorted(os.listdir(os.path.join(prefix, "include", "eigstream"))) == ["eig.h"],
          "include/eigstream holds more than eig.h (internal headers installed)")
    cmake_dir = os.path.join(libdir, "cmake", "eigstream")
    for f in ("eigstream-config.cmake", "eigstream-config-version.cmake", "eigstream-targets.cmake"):
        check(os.path.isfile(os.path.join(cmake_dir, f)), f"{cmake_dir}/{f} missing")
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(libdir, "pkgconfig"))
    got = run(["pkg-config", "--modversion", "eigstream-eig"], env=env).stdout.strip()
    check(got == version, f"pkg-config --modversion eigstream-eig: {got!r}, project {version}")
    cflags = run(["pkg-config", "--cflags", "eigstream-eig"], env=env).stdout
    check(f"-I{prefix}/include" in cflags, f"pkg-config --cflags: {cflags!r} lacks -I{prefix}/include")
    cfg = os.path.join(prefix, "etc", "eigstream", "eigstream.cfg")
    check(os.path.isfile(cfg) and filecmp.cmp(cfg, os.path.join(source, "config", "eigstream.cfg"), False),
          f"{cfg} missing or not config/eigstream.cfg")
    python = os.path.join(prefix, "lib", "python3", "dist-packages")
    for f in ("eigstream/__init__.py", "eigstream/_config.py", "eigstream_client.py"):
        check(os.path.isfile(os.path.join(python, f)), f"{python}/{f} missing")
    check(os.path.isfile(os.path.join(prefix, "share", "doc", "eigstream", "README.md")), "README not installed")


def cuda_library_dir(env):
    """The CUDA Toolkit's library folder when the .pc's static libraries name
    the CUDA runtime (a CUDA build), else None. The build's CMake tells it
    (EIGSTREAM_CUDA_LIBRARY_DIR, CUDAToolkit_LIBRARY_DIR): nvcc on PATH may
    be a wrapper script outside the toolkit (/usr/local/bin/nvcc)."""
    libs = run(["pkg-config", "--static", "--libs", "eigstream-eig"], env=env).stdout
    if "-lcudart_static" not in libs.split():
        return None
    folder = os.environ.get("EIGSTREAM_CUDA_LIBRARY_DIR", "")
    if check(folder, "the .pc names -lcudart_static but EIGSTREAM_CUDA_LIBRARY_DIR is not set"):
        check(os.path.isfile(os.path.join(folder, "libcudart_static.a")),
              f"the .pc names -lcudart_static but {folder} holds no libcudart_static.a")
    return folder or None


def consumer(source, prefix, scratch, sysroot=None):
    src = os.path.join(source, "tests", "install", "consumer")
    libdir = libdir_of(prefix)
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    build = os.path.join(scratch, "cmake")
    run(["cmake", "-S", src, "-B", build, f"-DCMAKE_PREFIX_PATH={prefix}",
         "-DCMAKE_C_FLAGS=-Wall -Wextra -Werror", "-DCMAKE_BUILD_TYPE=Release"])
    run(["cmake", "--build", build])
    pc = os.path.join(scratch, "pkg-config")
    os.makedirs(pc)
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(libdir, "pkgconfig"))
    make = ["make", "-f", os.path.join(src, "Makefile"), f"SRC={os.path.join(src, 'consumer.c')}"]
    if sysroot:
        # Only the paths the .pc derives from ${prefix} move into the unpacked
        # tree; a sysroot would also move the system's and the CUDA Toolkit's.
        make.append(f"PKG_CONFIG=pkg-config --define-variable=prefix={prefix}")
    cuda_libdir = cuda_library_dir(env)
    if cuda_libdir:
        # The .pc names -lcudart_static without the toolkit's folder (it is
        # the target machine's): the linker is told, as docs/library.md says.
        env["LIBRARY_PATH"] = os.pathsep.join(p for p in (cuda_libdir, os.environ.get("LIBRARY_PATH")) if p)
    run(make, env=env, cwd=pc)
    programs = {"cmake shared": os.path.join(build, "consumer"),
                "cmake static": os.path.join(build, "consumer_static"),
                "pkg-config shared": os.path.join(pc, "consumer-pc"),
                "pkg-config static": os.path.join(pc, "consumer-pc-static")}
    # pkg-config sets no run path: the loader is told where the prefix is.
    run_env = dict(os.environ, LD_LIBRARY_PATH=libdir, OMP_NUM_THREADS="2")
    for how, exe in programs.items():
        if not check(os.access(exe, os.X_OK), f"{how}: {exe} not built"):
            continue
        ldd = run(["ldd", exe], env=run_env).stdout
        lib = re.search(r"libeigstream-eig\.so\.2 => (\S+)", ldd)
        if "shared" in how:
            check(lib and os.path.realpath(lib.group(1)).startswith(os.path.realpath(libdir)),
                  f"{how}: loads {lib.group(1) if lib else 'no libeigstream-eig'}, not {libdir}'s")
        else:
            check(lib is None, f"{how}: linked to the shared library: {lib.group(0) if lib else ''}")
        for backend in ("cpu", "lapack"):
            r = run([exe, backend], env=run_env)
            check("consumer: PASS" in r.stdout, f"{how} {backend}: {r.stdout[-500:]}")
            print(f"{how} {backend}: {r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ''}")


def pip_install(source, prefix, scratch):
    version = project_version(source)
    pyproject = open(os.path.join(source, "tools", "python", "pyproject.toml")).read()
    got = re.search(r'^version = "([^"]+)"', pyproject, re.M)
    check(got and got.group(1) == version, f"pyproject.toml version {got and got.group(1)}, project {version}")
    shutil.rmtree(scratch, ignore_errors=True)
    tree = os.path.join(scratch, "python")
    # A copy: pip builds in the tree it is given (build/, egg-info).
    shutil.copytree(os.path.join(source, "tools", "python"), tree,
                    ignore=shutil.ignore_patterns("__pycache__", "test_*"))
    venv = os.path.join(scratch, "venv")
    run([sys.executable, "-m", "venv", "--system-site-packages", venv])
    run([os.path.join(venv, "bin", "pip"), "install", "--no-build-isolation", "--no-deps", "--no-index", tree])
    so = os.path.join(libdir_of(prefix), "libeigstream-eig.so.2")
    env = dict(os.environ, EIGSTREAM_LIB=so, OMP_NUM_THREADS="2")
    env.pop("PYTHONPATH", None)
    r = run([os.path.join(venv, "bin", "python"), os.path.join(source, "tests", "install", "test_python_eigh.py"),
             os.path.join(source, "eig", "eig.h"), "--backends", "cpu", "--expect-lib-under", prefix], env=env)
    check(f"package: {venv}" in r.stdout, f"the venv's package was not the one imported:\n{r.stdout[:500]}")
    print(r.stdout.strip().splitlines()[-1] if r.stdout.strip() else "")


def main():
    mode, paths = sys.argv[1], [os.path.abspath(p) for p in sys.argv[2:6]]
    if mode == "install":
        install(*paths[:3])
    elif mode == "consumer":
        consumer(*paths)
    elif mode == "pip":
        pip_install(*paths[:3])
    else:
        sys.exit(f"unknown mode {mode}")
    if failures:
        print(f"test_install {mode}: {len(failures)} failures")
        sys.exit(1)
    print(f"test_install {mode}: all passed")


main()
