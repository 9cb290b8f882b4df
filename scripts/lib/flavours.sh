# The OpenSSL-flavour rows of scripts/test (sourced by it; uses its row(),
# count_junit and FAILED): the main JUnit run is the default, bundled
# OpenSSL 3.5; these run the engine, socket and Tomcat tests again on the
# system flavour, once on the host's OpenSSL 3.0 (libssl.so.3) and once on
# an OpenSSL 4.0 (libssl.so.4 built by scripts/openssl, found through
# LD_LIBRARY_PATH as a distribution's would be). ProviderFlavourTest fails a
# row that ran on another OpenSSL than the one it names.
# shellcheck shell=bash

FLAVOUR_TESTS=${FLAVOUR_TESTS:-'Engine*Test,Contract*Test,Provider*Test,TrustTest,*FeaturesTest,Socket*Test,PeerFailureTest,Tomcat*Test,HeldCiphersTest,ConfigResolutionTest'}

# flavour_row NAME EXPECT_VERSION EXPECT_FLAVOUR [LD_LIBRARY_PATH]
flavour_row() {
  local name=$1 version=$2 flavour=$3 libpath=${4:-} rc n bad skip t0=$SECONDS tag
  tag=$(tr -c 'a-z0-9\n' - <<<"${name,,}")
  log "JUnit ($FLAVOUR_TESTS) on $name"
  rm -rf target/surefire-reports
  LD_LIBRARY_PATH=$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
    mvn -B -q surefire:test -Dtest="$FLAVOUR_TESTS" -Dsurefire.failIfNoSpecifiedTests=false \
      -Dtlsbridge.openssl=system -Dtlsbridge.test.expectOpenssl="$version" \
      -Dtlsbridge.test.expectFlavour="$flavour" >"target/flavour-$tag.log" 2>&1
  rc=$?
  tail -40 "target/flavour-$tag.log"
  rm -rf "target/surefire-$tag" && mv target/surefire-reports "target/surefire-$tag" 2>/dev/null
  read -r n bad skip < <(count_junit "target/surefire-$tag/TEST-*.xml")
  ((rc != 0 && bad == 0)) && bad=1
  row "java, $name" "$n" "$((n - bad - skip))" "$bad" "$((SECONDS - t0))s$( ((skip)) && echo "; $skip skipped")"
  ((bad > 0 || n == 0)) && FAILED=1
}

flavour_rows() {
  local o4
  flavour_row "system OpenSSL 3.0" "OpenSSL 3.0." "system (libssl.so.3)"
  if o4=$(tb_openssl 4.0) && [[ -f $o4/so/libssl.so.4 ]]; then
    flavour_row "system OpenSSL 4.0" "OpenSSL 4.0." "system (libssl.so.4)" "$o4/so"
  else
    row "java, system OpenSSL 4.0" 0 0 1 "no OpenSSL 4.0 build (scripts/openssl 4.0)"
    FAILED=1
  fi
}
