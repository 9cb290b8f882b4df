#!/usr/bin/env python3
"""Checks pom.xml against what Maven Central asks of a published POM, and the
jars `mvn package` leaves under target/ against what Central asks to be
uploaded beside them.

  pom_rules.py [--pom pom.xml] [--target target] [--jar target/tlsbridge-V.jar]

POM: name, description, url; a license with name and url; a developer with a
name; scm with connection and url; maven-source-plugin and
maven-javadoc-plugin attached to the build; no dependency or plugin on a
SNAPSHOT version (properties resolved). The manifest's bundled OpenSSL
version (the pom property tlsbridge.bundled.openssl) must be the release
pinned in scripts/lib/openssl-crates/3.5/Cargo.toml.
target/: <artifactId>-<version>-sources.jar with the provider's source,
-javadoc.jar with an index.html, and the jar's manifest naming the bundled
OpenSSL version. With --jar, `java -jar` must report that same OpenSSL.

Prints one PASS or FAIL line per rule (tests/packaging/run.sh counts them);
exits 1 when any rule fails.
"""
import argparse
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile

NS = {"m": "http://maven.apache.org/POM/4.0.0"}
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
failures = 0


def report(ok, what):
    global failures
    print(("PASS " if ok else "FAIL ") + what)
    if not ok:
        failures += 1


def text(node, path):
    found = node.find(path, NS)
    return (found.text or "").strip() if found is not None and found.text else ""


def resolver(project):
    props = {}
    node = project.find("m:properties", NS)
    if node is not None:
        for p in node:
            props[p.tag.split("}", 1)[1]] = (p.text or "").strip()
    props["project.version"] = text(project, "m:version")
    props["project.artifactId"] = text(project, "m:artifactId")

    def resolve(value):
        for _ in range(10):  # properties may name other properties
            new = re.sub(r"\$\{([^}]+)\}", lambda m: props.get(m.group(1), m.group(0)), value)
            if new == value:
                break
            value = new
        return value

    return resolve


def check_pom(pom):
    project = ET.parse(pom).getroot()
    resolve = resolver(project)
    for field in ("name", "description", "url"):
        report(bool(text(project, "m:" + field)), f"POM has <{field}>")
    licenses = project.findall("m:licenses/m:license", NS)
    report(any(text(l, "m:name") and text(l, "m:url") for l in licenses), "POM has a <license> with name and url")
    developers = project.findall("m:developers/m:developer", NS)
    report(any(text(d, "m:name") for d in developers), "POM has a <developer> with a name")
    scm = project.find("m:scm", NS)
    report(scm is not None and bool(text(scm, "m:connection")) and bool(text(scm, "m:url")),
           "POM has <scm> with connection and url")

    plugins = {text(p, "m:artifactId"): p for p in project.findall("m:build/m:plugins/m:plugin", NS)}
    for name, goal in (("maven-source-plugin", "jar-no-fork"), ("maven-javadoc-plugin", "jar")):
        p = plugins.get(name)
        goals = [g.text.strip() for g in p.findall("m:executions/m:execution/m:goals/m:goal", NS)] if p is not None else []
        report(goal in goals, f"{name} attaches its jar (goal {goal})")

    snapshots = []
    for kind, path in (("dependency", "m:dependencies/m:dependency"),
                       ("plugin", "m:build/m:plugins/m:plugin"),
                       ("plugin dependency", "m:build/m:plugins/m:plugin/m:dependencies/m:dependency")):
        for d in project.findall(path, NS):
            version = resolve(text(d, "m:version"))
            if "SNAPSHOT" in version.upper():
                snapshots.append(f"{kind} {text(d, 'm:groupId')}:{text(d, 'm:artifactId')}:{version}")
    report(not snapshots, "no SNAPSHOT dependency or plugin" + (": " + ", ".join(snapshots) if snapshots else ""))

    bundled = resolve("${tlsbridge.bundled.openssl}")
    toml = os.path.join(ROOT, "scripts/lib/openssl-crates/3.5/Cargo.toml")
    pinned = re.search(r'^openssl-src = "=[^+"]*\+([^"]+)"', open(toml).read(), re.M)
    pinned = pinned.group(1) if pinned else "(none found)"
    report(bundled == pinned, f"tlsbridge.bundled.openssl {bundled} is the OpenSSL pinned in {os.path.relpath(toml, ROOT)} ({pinned})")
    return text(project, "m:artifactId"), resolve(text(project, "m:version")), bundled


def check_target(target, artifact, version, bundled, jar):
    base = os.path.join(target, f"{artifact}-{version}")
    sources, javadoc = base + "-sources.jar", base + "-javadoc.jar"
    names = zipfile.ZipFile(sources).namelist() if os.path.isfile(sources) else []
    report("org/tlsbridge/TlsBridgeProvider.java" in names,
           f"{os.path.relpath(sources, ROOT)} holds the provider's source" if names else f"no {os.path.relpath(sources, ROOT)}")
    names = zipfile.ZipFile(javadoc).namelist() if os.path.isfile(javadoc) else []
    report("index.html" in names and "org/tlsbridge/TlsBridgeProvider.html" in names,
           f"{os.path.relpath(javadoc, ROOT)} holds the javadoc" if names else f"no {os.path.relpath(javadoc, ROOT)}")
    jar = jar or base + ".jar"
    if not os.path.isfile(jar):
        report(False, f"no {jar}")
        return
    manifest = zipfile.ZipFile(jar).read("META-INF/MANIFEST.MF").decode()
    attr = re.search(r"^Bundled-OpenSSL-Version: *(\S+)", manifest, re.M)
    report(attr is not None and attr.group(1) == bundled,
           f"the jar's manifest says Bundled-OpenSSL-Version: {attr.group(1) if attr else '(missing)'}")
    out = subprocess.run(["java", "-jar", jar], capture_output=True, text=True, timeout=120).stdout
    line = next((l for l in out.splitlines() if l.startswith("openssl ")), "(no openssl line)")
    report(line.startswith(f"openssl OpenSSL {bundled} ") and "(bundled;" in line,
           f"java -jar runs the OpenSSL the manifest names: {line}")


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--pom", default=os.path.join(ROOT, "pom.xml"))
    a.add_argument("--target", default=os.path.join(ROOT, "target"))
    a.add_argument("--jar")
    o = a.parse_args()
    artifact, version, bundled = check_pom(o.pom)
    check_target(o.target, artifact, version, bundled, o.jar)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
