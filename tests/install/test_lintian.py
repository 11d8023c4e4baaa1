#!/usr/bin/python3
"""The .deb as Debian's policy checker and a packager see it.

usage: test_lintian.py BUILD SOURCE SCRATCH

Makes the .deb and its -dbgsym from the build tree (cpack, no rebuild), then:
1. lintian reports no error on the .deb or the .ddeb; every warning it
   reports is one that docs/operations.md explains (its "lintian" table
   names the tag).
2. Every program in /usr/bin is stripped, and the .ddeb holds its debug
   information under /usr/lib/debug/.build-id/ by the build id readelf reads
   from the stripped program (the same for libeigstream-eig.so.2).
3. Every program in /usr/bin has /usr/share/man/man1/PROGRAM.1.gz, and that
   page is byte for byte what help2man makes of the program's current --help
   (run from the unpacked package, dated by the changelog's entry).
4. The changelog (changelog.gz, native) has the package's version and the
   Maintainer field's person; the copyright file is DEP-5 with a License for
   Files: *; the control archive activates the ldconfig trigger and no
   maintainer script calls ldconfig; the Maintainer is a mail address that
   is not on localhost; the .pc names no /usr/local or CUDA Toolkit folder.
Exit 77 (skipped) without lintian, dpkg-deb, cpack or help2man:
tools/install-deps.sh installs them, so CI runs it.
"""
import email.utils
import glob
import gzip
import os
import re
import shutil
import sys

from deb_checks import check, failures, run

BUILD, SOURCE, SCRATCH = (os.path.abspath(p) for p in sys.argv[1:4])
DOCS = os.path.join(SOURCE, "docs", "operations.md")


def make_packages():
    out = os.path.join(SCRATCH, "cpack")
    shutil.rmtree(out, ignore_errors=True)
    run(["cpack", "-G", "DEB", "--config", os.path.join(BUILD, "CPackConfig.cmake"), "-B", out])
    debs = glob.glob(os.path.join(out, "*.deb"))
    ddebs = glob.glob(os.path.join(out, "*-dbgsym_*.ddeb"))
    check(len(debs) == 1, f"cpack made {debs}, expected one .deb")
    check(len(ddebs) == 1, f"cpack made {ddebs}, expected one -dbgsym .ddeb")
    return (debs[0] if debs else None), (ddebs[0] if ddebs else None)


def explained_warnings():
    """Tags named in the first column of a table in a section of docs/operations.md
    whose heading names lintian."""
    sections = re.findall(r"^#+ [^\n]*lintian[^\n]*\n(.*?)(?=^#|\Z)", open(DOCS).read(), re.M | re.S | re.I)
    check(sections, f"{DOCS} has no section on lintian")
    return {tag for text in sections for tag in re.findall(r"^\| `([a-z0-9-]+)`", text, re.M)}


def check_lintian(deb):
    # --tag-display-limit 0: every instance; info tags are not counted.
    r = run(["lintian", "--tag-display-limit", "0", "--allow-root", deb], expect=None, timeout=600)
    hints = re.findall(r"^([EWIXPO]): (\S+?)(?: \w+)?: (\S+)(.*)$", r.stdout, re.M)
    errors = [h for h in hints if h[0] == "E"]
    warnings = [h for h in hints if h[0] == "W"]
    print(f"lintian {os.path.basename(deb)}: {len(errors)} errors, {len(warnings)} warnings "
          f"({len([h for h in hints if h[0] == 'I'])} info)")
    for h in errors + warnings:
        print(f"  {h[0]}: {h[2]}{h[3]}")
    check(r.returncode in (0, 1, 2) and "internal error" not in r.stderr.lower(), f"lintian failed: {r.stderr[-800:]}")
    check(not errors, f"lintian errors in {os.path.basename(deb)}: {sorted({h[2] for h in errors})}")
    unexplained = sorted({h[2] for h in warnings} - explained_warnings())
    check(not unexplained, f"lintian warnings not explained in docs/operations.md: {unexplained}")


def build_id(path):
    m = re.search(r"Build ID: ([0-9a-f]+)", run(["readelf", "-n", path]).stdout)
    return m.group(1) if m else None


def check_split_debug(root, dbg_root):
    elves = []
    for f in glob.glob(os.path.join(root, "usr", "**", "*"), recursive=True):
        if os.path.isfile(f) and not os.path.islink(f) and not f.endswith(".a"):
            with open(f, "rb") as fh:
                if fh.read(4) == b"\x7fELF":
                    elves.append(f)
    check(len(elves) >= 2, f"only {len(elves)} ELF files in the package")
    for f in elves:
        name = os.path.relpath(f, root)
        sections = run(["readelf", "-S", "-W", f]).stdout
        check(".debug_info" not in sections and ".symtab" not in sections, f"{name} is not stripped")
        bid = build_id(f)
        if not check(bid, f"{name} has no build id"):
            continue
        debug = os.path.join(dbg_root, "usr", "lib", "debug", ".build-id", bid[:2], bid[2:] + ".debug")
        if check(os.path.isfile(debug), f"{name}: no {os.path.relpath(debug, dbg_root)} in the -dbgsym package"):
            dbg_sections = run(["readelf", "-S", "-W", debug]).stdout
            check(".debug_info" in dbg_sections and ".symtab" in dbg_sections,
                  f"{name}: its .debug file holds no debug information or symbols")
            check(build_id(debug) == bid, f"{name}: the .debug file's build id differs")


def help2man_page(program, name, version, epoch, out):
    env = dict(os.environ, SOURCE_DATE_EPOCH=str(epoch), LC_ALL="C.UTF-8")
    run(["help2man", "--no-info", "--no-discard-stderr", "--section=1", f"--version-string={version}",
         f"--name={name}", f"--output={out}", program], env=env)
    return open(out, "rb").read() if os.path.exists(out) else b""


def check_man_pages(root, version, epoch):
    bindir = os.path.join(root, "usr", "bin")
    mandir = os.path.join(root, "usr", "share", "man", "man1")
    programs = sorted(os.listdir(bindir))
    check(len(programs) >= 10, f"only {programs} in /usr/bin")
    fresh = os.path.join(SCRATCH, "man")
    os.makedirs(fresh, exist_ok=True)
    for p in programs:
        page = os.path.join(mandir, p + ".1.gz")
        if not check(os.path.isfile(page), f"{p}: no /usr/share/man/man1/{p}.1.gz"):
            continue
        packaged = gzip.open(page).read()
        m = re.search(rb"^\.SH NAME\n" + re.escape(p.encode()) + rb" \\- (.+)$", packaged, re.M)
        if not check(m is not None, f"{p}.1: no NAME line for {p}"):
            continue
        name = m.group(1).decode().replace("\\-", "-")
        made = help2man_page(os.path.join(bindir, p), name, version, epoch, os.path.join(fresh, p + ".1"))
        check(made == packaged, f"{p}.1.gz is not help2man's page of the current {p} --help "
              f"(rebuild: cmake --build; diff {fresh}/{p}.1 against the package's)")
        if made == packaged:
            print(f"{p}.1.gz: matches --help ({len(packaged)} bytes)")


def check_changelog_copyright(root, control, deb):
    info = run(["dpkg-deb", "-f", deb, "Version", "Maintainer"]).stdout
    fields = dict(line.split(": ", 1) for line in info.strip().splitlines())
    version, maintainer = fields.get("Version", ""), fields.get("Maintainer", "")
    _, address = email.utils.parseaddr(maintainer)
    check(re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", address or "") and "localhost" not in address,
          f"Maintainer {maintainer!r} is not a mail address off localhost")
    doc = os.path.join(root, "usr", "share", "doc", "eigstream")
    changelog = os.path.join(doc, "changelog.gz")
    epoch = None
    if check(os.path.isfile(changelog), "no /usr/share/doc/eigstream/changelog.gz"):
        text = gzip.open(changelog).read().decode()
        head = re.match(r"eigstream \(([^)]+)\) \S+; urgency=\w+\n", text)
        check(head and head.group(1) == version, f"changelog's first entry is not version {version}: {text[:80]!r}")
        trailer = re.search(r"^ -- (.+? <[^>]+>)  (.+)$", text, re.M)
        if check(trailer is not None, "changelog entry has no trailer line"):
            check(trailer.group(1) == maintainer, f"changelog signed by {trailer.group(1)!r}, Maintainer {maintainer!r}")
            epoch = int(email.utils.parsedate_to_datetime(trailer.group(2)).timestamp())
    copyright_file = os.path.join(doc, "copyright")
    if check(os.path.isfile(copyright_file), "no /usr/share/doc/eigstream/copyright"):
        paragraphs = [p for p in re.split(r"\n\s*\n", open(copyright_file).read()) if p.strip()]
        check(paragraphs[0].startswith("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"),
              "copyright is not DEP-5 (Format line)")
        files = [p for p in paragraphs if re.match(r"^Files: \*$", p, re.M)]
        check(files and re.search(r"^Copyright: \S", files[0], re.M) and re.search(r"^License: \S", files[0], re.M),
              "copyright: no 'Files: *' paragraph with Copyright and License")
    triggers = os.path.join(control, "triggers")
    check(os.path.isfile(triggers) and re.search(r"^activate-noawait ldconfig$", open(triggers).read(), re.M),
          "the control archive does not activate the ldconfig trigger")
    for script in ("preinst", "postinst", "prerm", "postrm"):
        path = os.path.join(control, script)
        if os.path.isfile(path):
            code = "\n".join(line for line in open(path).read().splitlines() if not line.lstrip().startswith("#"))
            check(not re.search(r"\bldconfig\b", code), f"{script} calls ldconfig (the trigger does)")
    for pc in glob.glob(os.path.join(root, "usr", "lib", "**", "*.pc"), recursive=True):
        text = open(pc).read()
        check(not re.search(r"-[IL]\S*(/usr/local|cuda)", text), f"{os.path.basename(pc)} names a build machine's folder:\n{text}")
    return version, epoch


def main():
    for tool in ("lintian", "dpkg-deb", "cpack", "help2man", "readelf"):
        if not shutil.which(tool):
            print(f"SKIP: {tool} not found (tools/install-deps.sh installs it)")
            sys.exit(77)
    shutil.rmtree(SCRATCH, ignore_errors=True)
    os.makedirs(SCRATCH)
    deb, ddeb = make_packages()
    if not deb:
        sys.exit(1)
    root, dbg_root, control = (os.path.join(SCRATCH, d) for d in ("root", "dbgsym", "control"))
    run(["dpkg-deb", "-x", deb, root])
    run(["dpkg-deb", "-e", deb, control])
    if ddeb:
        run(["dpkg-deb", "-x", ddeb, dbg_root])
        check_split_debug(root, dbg_root)
    version, epoch = check_changelog_copyright(root, control, deb)
    if epoch is not None:
        check_man_pages(root, version, epoch)
    check_lintian(deb)
    if ddeb:
        check_lintian(ddeb)
    if failures:
        print(f"test_lintian: {len(failures)} failures")
        sys.exit(1)
    print("test_lintian: all passed")


main()
