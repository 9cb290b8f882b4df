# The sanitizer and -Xcheck:jni passes of scripts/test (sourced by it; uses
# its row() and FAILED). Kept in one file so scripts/test only calls
# san_asan_pass and san_checkjni_pass.
# shellcheck shell=bash

# Java tests of the ASan pass: all of them (ConcurrencyTest's 64-thread
# soak alone takes ~105 s sanitized; the whole pass ~3 min).
SAN_JAVA_TESTS=${SAN_JAVA_TESTS:-'org/tlsbridge/**/*Test.java'}
# Java tests of the -Xcheck:jni pass: every test class that crosses JNI in a
# new way (engine, context and session calls, native sockets, Tomcat); the
# interop variants repeat the same calls against other peers.
SAN_CHECKJNI_TESTS=${SAN_CHECKJNI_TESTS:-'ContractTest,AllocationTest,TrustTest,FeaturesTest,ProviderTest,Socket*Test,Tomcat*Test,ConfigResolutionTest,PeerFailureTest,KeyUpdateTest,PhaSocketTest,PeerBytesTest'}
# What a sanitizer prints; any of it fails the pass.
SAN_REPORT_RE='ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|SUMMARY: (Address|Undefined|Leak)Sanitizer'
SAN_CHECKJNI_RE='WARNING in native method|FATAL ERROR in native method'

# san_launcher DIR JAVA LINES...: DIR/bin/java, a launcher that exports the
# given variables then runs JAVA. Surefire's -Djvm needs a path ending in
# bin/java; this is how the forked test JVM gets an environment and JVM
# options of its own without touching the Maven JVM or the pom.
san_launcher() {
  local dir=$1 java=$2 l
  shift 2
  mkdir -p "$dir/bin"
  {
    echo '#!/usr/bin/env bash'
    for l in "$@"; do echo "$l"; done
    echo "exec $java \"\${TB_JVM_ARGS[@]}\" \"\$@\""
  } >"$dir/bin/java"
  chmod +x "$dir/bin/java"
}

# san_surefire NAME TESTS JVM: runs the JUnit tests TESTS with the launcher
# JVM; reports are added to target/surefire-NAME, the output to
# target/NAME.log.
san_surefire() {
  local name=$1 tests=$2 jvm=$3 rc
  rm -rf target/surefire-reports
  mkdir -p "target/surefire-$name"
  mvn -B -q surefire:test -Djvm="$jvm" -Dtest="$tests" -Dsurefire.failIfNoSpecifiedTests=false \
    >>"target/$name.log" 2>&1
  rc=$?
  cp target/surefire-reports/* "target/surefire-$name"/ 2>/dev/null
  rm -rf target/surefire-reports
  return $rc
}

# Prints the table when scripts/test runs one pass only (--asan, --checkjni).
san_summary() {
  echo
  echo "==================== tlsbridge test summary ===================="
  printf '%-28s %6s %6s %6s %s\n' "suite" "ran" "passed" "failed" "note"
  printf '%s\n' "${ROWS[@]}"
  echo "time: $(($(date +%s) - START))s"
  if ((FAILED)); then echo "RESULT: FAILED"; exit 1; fi
  echo "RESULT: PASSED"
  exit 0
}

# san_reports DIR PREFIX [FILE...]: prints the sanitizer reports in
# DIR/PREFIX* and the FILEs; 0 when none. UBSan, linked beside ASan, writes
# to stderr whatever log_path says, hence the output files too.
san_reports() {
  local hits d=$1 p=$2
  shift 2
  hits=$(grep -lE "$SAN_REPORT_RE" "$d/$p"* "$@" 2>/dev/null)
  [[ -z $hits ]] && return 0
  local f
  for f in $hits; do
    echo "---- $f"
    head -60 "$f"
  done
  return 1
}

# san_ctest NAME CTEST_ARGS...: the sanitized native tests CTEST_ARGS select
# (in target/asan), leaks counted; JUnit results in target/asan/ctest-NAME.xml,
# sanitizer logs in target/asan/logs/NAME-*. A sanitizer finding ends the
# test (ctest sees the failure); the logs are grepped as well in case a test
# swallowed its exit status. hard_rss_limit_mb keeps a runaway loop from
# taking the machine's memory.
san_ctest() {
  local name=$1 dir=$TB_ROOT/target/asan
  shift
  (cd "$dir" && ASAN_OPTIONS="detect_leaks=1:hard_rss_limit_mb=2000:log_path=$dir/logs/$name-asan" \
    UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$dir/logs/$name-ubsan" \
    ctest --output-on-failure --output-junit "$dir/ctest-$name.xml" "$@") 2>&1 | tail -30
}

san_asan_pass() {
  local dir=target/asan logs bid rc n bad skip note t0=$SECONDS
  logs=$TB_ROOT/$dir/logs
  # TB_FLAVOURS=ON: the cores of the bundled (static OpenSSL 3.5.5) and
  # system-4 (4.0.3) flavours too, sanitized, for the native tests whose
  # records the BIOs seal: OpenSSL 3.0, which the rest use, never lets them.
  log "ASan+UBSan: building libtlsbridge and the native tests (with the fault-injection hook), and the sealing tests on OpenSSL 3.5.5 and 4.0.3, in $dir"
  bid=$(sed -n 's/^build.id=//p' target/classes/org/tlsbridge/build.properties 2>/dev/null)
  rm -rf "$logs" && mkdir -p "$logs"
  if ! { cmake -S . -B $dir -DTB_SANITIZE=ON -DTB_FAULT_INJECTION=ON -DTB_BUILD_PROBE=OFF -DTB_FLAVOURS=ON \
           -DTB_BUILD_ID="${bid:-dev}" >/dev/null && cmake --build $dir -j2 >"$dir.build.log" 2>&1; }; then
    tail -30 "$dir.build.log"
    row "native, ASan+LSan (ctest)" 0 0 1 "build failed"
    row "native seal, ASan (3.5, 4.0)" 0 0 1 "build failed"
    row "java, ASan+UBSan" 0 0 1 "build failed"
    FAILED=1
    return
  fi

  # Native tests: leaks count (LeakSanitizer); see san_ctest.
  log "ASan+UBSan: ctest (test_faults fails each allocation of a connection in turn)"
  san_ctest native -LE 'bundled|system4'
  read -r n bad skip < <(count_junit "$dir/ctest-native.xml")
  note=$(grep -ho '; [0-9]* runs:' "$dir"/Testing/Temporary/LastTest.log 2>/dev/null | tr -dc '0-9\n' | paste -sd+)
  note=${note:+allocation faults: $note}
  if ! san_reports "$logs" native- "$dir"/Testing/Temporary/LastTest.log; then bad=$((bad > 0 ? bad : 1)); note="sanitizer report: see target/asan/logs, target/asan.log"; fi
  row "native, ASan+LSan (ctest)" "$n" "$((n - bad - skip))" "$bad" "$((SECONDS - t0))s${note:+; $note}"
  t0=$SECONDS
  ((bad > 0 || n == 0)) && FAILED=1

  # The tests that seal (engine and socket BIOs, every seal failure point,
  # key limits) on the flavours' OpenSSL, where sealing is on.
  log "ASan+UBSan: ctest of the sealing tests on the bundled OpenSSL 3.5.5 and the system-4 4.0.3"
  san_ctest seal -L 'bundled|system4'
  read -r n bad skip < <(count_junit "$dir/ctest-seal.xml")
  note=""
  if ! san_reports "$logs" seal- "$dir"/Testing/Temporary/LastTest.log; then bad=$((bad > 0 ? bad : 1)); note="; sanitizer report: see target/asan/logs"; fi
  row "native seal, ASan (3.5, 4.0)" "$n" "$((n - bad - skip))" "$bad" "$((SECONDS - t0))s$note"
  t0=$SECONDS
  ((bad > 0 || n == 0)) && FAILED=1

  # Java: the JVM itself is not instrumented, so the ASan runtime must be
  # preloaded (it has to be the first library to interpose malloc). The JVM
  # uses SIGSEGV on purpose (implicit null checks, safepoint polls):
  # handle_segv=0 and allow_user_segv_handler=1 leave those signals to it.
  # detect_leaks=0: at exit LeakSanitizer would report the JVM's own
  # never-freed allocations (and cannot scan its threads reliably); native
  # leaks are the native tests' job. The library is built with
  # -fno-sanitize-recover, so UBSan findings abort like ASan's: the forked
  # JVM dies, failing surefire, and the report is in log_path (ASan) or on
  # the JVM's stderr, i.e. target/asan.log (UBSan). Children the tests start
  # (curl, openssl) drop the preload: curl hangs with it (Processes.builder).
  log "ASan+UBSan: Java tests ($SAN_JAVA_TESTS) on the sanitized library"
  san_launcher "$TB_ROOT/$dir/jvm" "$JAVA_HOME/bin/java" \
    "export LD_PRELOAD=$(gcc -print-file-name=libasan.so)" \
    "export ASAN_OPTIONS=handle_segv=0:allow_user_segv_handler=1:detect_leaks=0:hard_rss_limit_mb=6000:log_path=$logs/java-asan" \
    "export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:log_path=$logs/java-ubsan" \
    "TB_JVM_ARGS=(-Dtlsbridge.library.path=$TB_ROOT/$dir/native/libtlsbridge.so)"
  rm -rf target/surefire-asan target/asan.log
  san_surefire asan "$SAN_JAVA_TESTS" "$TB_ROOT/$dir/jvm/bin/java"
  rc=$?
  tail -40 target/asan.log
  read -r n bad skip < <(count_junit 'target/surefire-asan/TEST-*.xml')
  note=""
  if ! san_reports "$logs" java- target/asan.log target/surefire-asan/*; then bad=$((bad + 1)); note="sanitizer report: see target/asan/logs, target/asan.log"; fi
  ((rc != 0 && bad == 0)) && { bad=1; note="surefire exit $rc (crashed JVM?) see target/asan.log"; }
  row "java, ASan+UBSan" "$n" "$((n - bad - skip))" "$bad" "$((SECONDS - t0))s${note:+; $note}"
  ((bad > 0 || n == 0)) && FAILED=1
}

san_checkjni_pass() {
  local dir=$TB_ROOT/target/checkjni rc n bad skip note hits t0=$SECONDS
  log "-Xcheck:jni: Java tests ($SAN_CHECKJNI_TESTS)"
  rm -rf "$dir" && mkdir -p "$dir"
  # The JVM's checker prints to its own stdout, which surefire multiplexes;
  # LogVMOutput copies every such line into a file of its own as well.
  san_launcher "$dir/jvm" "$JAVA_HOME/bin/java" \
    "TB_JVM_ARGS=(-Xcheck:jni -XX:+UnlockDiagnosticVMOptions -XX:+LogVMOutput -XX:LogFile=$dir/vm-%p.log)"
  rm -rf target/surefire-checkjni target/checkjni.log
  san_surefire checkjni "$SAN_CHECKJNI_TESTS" "$dir/jvm/bin/java"
  rc=$?
  tail -40 target/checkjni.log
  read -r n bad skip < <(count_junit 'target/surefire-checkjni/TEST-*.xml')
  note=""
  hits=$(grep -ohE "($SAN_CHECKJNI_RE)[^'\"<]*" "$dir"/vm-*.log target/checkjni.log target/surefire-checkjni/* 2>/dev/null |
    sort | uniq -c | sort -rn)
  if [[ -n $hits ]]; then
    echo "$hits" | head -20
    bad=$((bad + 1))
    note="JNI check: $(echo "$hits" | head -1 | sed -E 's/^ *[0-9]+ //' | cut -c1-60)"
  fi
  ((rc != 0 && bad == 0)) && { bad=1; note="surefire exit $rc, see target/checkjni.log"; }
  row "java, -Xcheck:jni" "$n" "$((n - bad - skip))" "$bad" "$((SECONDS - t0))s${note:+; $note}"
  ((bad > 0 || n == 0)) && FAILED=1
}
