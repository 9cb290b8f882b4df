/* Fixed keys and self-signed certificates (CN=localhost, valid for a
 * century) for the fuzzers and the corpus generator. They must be fixed:
 * the recorded peer flights in the seed corpus only verify against the
 * very certificate the recording server presented. Test material only. */
#ifndef TB_FUZZ_KEYS_H
#define TB_FUZZ_KEYS_H
static const char FZ_EC_KEY[] =
    "-----BEGIN PRIVATE KEY-----\n"
    "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgnExTfN+834dVW3ea\n"
    "6FlSJvneFtGj4w2OPzrNalDTL6ihRANCAAQ8XqiMw003xI8DV1XgL/4bSpBPFqJK\n"
    "5CAQ8Q2sYxLLNk26s2MuKDS89I3EIuEs4zgLbWLKtMkyT4HhRyICJ6oo\n"
    "-----END PRIVATE KEY-----\n";
static const char FZ_EC_CERT[] =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBfjCCASWgAwIBAgIUVaiQEw4uM4fRcxFDnDdlF19Om6EwCgYIKoZIzj0EAwIw\n"
    "FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTIwMjIzNDcyNloYDzIxMjYxMTA4\n"
    "MjM0NzI2WjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO\n"
    "PQMBBwNCAAQ8XqiMw003xI8DV1XgL/4bSpBPFqJK5CAQ8Q2sYxLLNk26s2MuKDS8\n"
    "9I3EIuEs4zgLbWLKtMkyT4HhRyICJ6ooo1MwUTAdBgNVHQ4EFgQUC0kB9BTJ/4Se\n"
    "xoBwhqCf7Aehd+IwHwYDVR0jBBgwFoAUC0kB9BTJ/4SexoBwhqCf7Aehd+IwDwYD\n"
    "VR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNHADBEAiAFGodY4b991HoNJ4Uf0Ftu\n"
    "8DdBge424IqBHwiTiArmiQIgEGIp9/jAhA0x3feJtfqGKdACnfg6tF5ZSJhjn8Ge\n"
    "384=\n"
    "-----END CERTIFICATE-----\n";
static const char FZ_RSA_KEY[] =
    "-----BEGIN PRIVATE KEY-----\n"
    "MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQC4K3J6mFwTrtJd\n"
    "oy4lUoqzQTRCgwlXC4HG4xukMVJzT4xWNS+2ar7BoHUhIKSKqpknShBM4WR+E7kJ\n"
    "RXZW62K1fE6mlcBgpw+2pCOnKRQqwsX+OK2+aXcrOAnbwCIw3wPPHRlaWvbT+vVf\n"
    "Xviu8neMq/OkJoWRxSwmEkr9qhZndVX8LUq5awtYL0qGffo23x63c0mIt5oQgEDD\n"
    "M908f40y6t03vVSbwVBUfif1yb6HzA3VZ848erVjox8vVz3rgOQFHvUeP+KMulRT\n"
    "kJV1TYC7MwWgH/CdGv4zITeNXftbFo7a6dgtYnu095BPYA6Hy+SC0GjPzv0YqBkv\n"
    "eFkyJ5vfAgMBAAECggEAAakqpB5hni/SZ9PD48RFye4JmZvy5p0M840yv51OQAn0\n"
    "mwZpwrxdsgNPaxgPQ8zcCrWpRfg2Xsiwv3un4IrI3hgb4XayQGzhQGVkiOpe6y/M\n"
    "d0ltj60FzRb5R8kIxeYM874wb1coqKq3sb96gKFhIJygWteaFsFvb3x0vqrc/tvV\n"
    "Fp33xVrnBWLU9FQegxXJW0Ds7QwO/bfJrjm4J40oBDCWFj3hYXyQ6Ww0FJQ5gr+R\n"
    "hyi9mTPPr+IH7r+cbI5w2sAjx1IlWJz5cFrynY+8k0Ty9UYU5uCttEu9bDJpuDhy\n"
    "OwL6qpMHAvC+Kei9d362Ja5kt4Yrrk59CELEIA+SCQKBgQDutwe6I7FCjYogM6Du\n"
    "MlOdE9ZN4T9RtXbDKwZCOJCc/8H96e1xRA25NNk8WbZthCMOXQKoWfnkcOJuCezF\n"
    "7rhmF5t7gTI4vGcos4eEylUQgOk/LkfA4/1iFHgcrxwox0m5U37cISbcPzq/JIuC\n"
    "8V9Z3u1EN4YQaaXqVDIbI7hdbQKBgQDFgVULdq3tDWqKaqfWN4dqqf0RUwJyCUPL\n"
    "juiRXlR8ZSVJgPCJ86njXYlpwTIIQSKY7aqPKxjnmvFJSERGiMDzO3xQsk+mBQg1\n"
    "4Neyc194422hGJhvanYoCvnLoGLHeU4nocAGNDd4fTUxDB4FNHOgj7pAyUf4LB6g\n"
    "BWDubdzK+wKBgQCnMDGNQKpJfnAbFY3ExiKhhN83NGbwhzNihaOghZVjIA1yFIBk\n"
    "L9GcwVLUXdDS6xTSXnoaBspqIFW10+WsywEDH82ZtmbCLdHiQ7rKWhsxr9eslHFU\n"
    "u1kfdE6baFlEhi8wSTY0XlOlNfOjI6lCUGMDwopSmMCghh3Z/JYLQ/1AEQKBgEgL\n"
    "T1xpJDSOakincyWfB9SOwXNqVkAGxSYhsRAl2qettZZEZHnN2jDH0/IxuPBt4hLq\n"
    "zwZ+cA075bwXkmAwTkHrdwNwp8EloMMWi1fa4f6U506WTDSIHyWoK0pt7Npak3m9\n"
    "dPBOZ9WZxqdnhiPb6Dmvc/9h7NDINzuj+qG+jYW1AoGBAOsDq75RrmPFy7KnS47d\n"
    "Iz53PCtnJhU22feOMkQs5i4gqvtXUZ1CreqLMMUiTftK6q+UHQUseTP7BLfYU1ln\n"
    "/orC/aaLTQ63fIILjxMUIRL8f36sxAN9ecbAb/hhXmu7VfR3c1M0oKSavPKZUFlj\n"
    "+d2ZP5SOG09CBKmHYZ9L2u53\n"
    "-----END PRIVATE KEY-----\n";
static const char FZ_RSA_CERT[] =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIDCzCCAfOgAwIBAgIURrJWRh4wx28FG+T8Pxr/rlJzykUwDQYJKoZIhvcNAQEL\n"
    "BQAwFDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTIwMjIzNDcyNloYDzIxMjYx\n"
    "MTA4MjM0NzI2WjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwggEiMA0GCSqGSIb3DQEB\n"
    "AQUAA4IBDwAwggEKAoIBAQC4K3J6mFwTrtJdoy4lUoqzQTRCgwlXC4HG4xukMVJz\n"
    "T4xWNS+2ar7BoHUhIKSKqpknShBM4WR+E7kJRXZW62K1fE6mlcBgpw+2pCOnKRQq\n"
    "wsX+OK2+aXcrOAnbwCIw3wPPHRlaWvbT+vVfXviu8neMq/OkJoWRxSwmEkr9qhZn\n"
    "dVX8LUq5awtYL0qGffo23x63c0mIt5oQgEDDM908f40y6t03vVSbwVBUfif1yb6H\n"
    "zA3VZ848erVjox8vVz3rgOQFHvUeP+KMulRTkJV1TYC7MwWgH/CdGv4zITeNXftb\n"
    "Fo7a6dgtYnu095BPYA6Hy+SC0GjPzv0YqBkveFkyJ5vfAgMBAAGjUzBRMB0GA1Ud\n"
    "DgQWBBSK02XItAWj6Ghdx2tSdXki2YnPyDAfBgNVHSMEGDAWgBSK02XItAWj6Ghd\n"
    "x2tSdXki2YnPyDAPBgNVHRMBAf8EBTADAQH/MA0GCSqGSIb3DQEBCwUAA4IBAQA2\n"
    "8uYRmLp4YLvVHEZ7T+rBMORsmnw8z1JrNYkvL20WTT6zsYP3dxS0Mk8cC+NMrwP0\n"
    "TlFBPVTUqpeYo9wR9d1A8azrKnIeAR/8ll1LgO22tUlCQoma5LIoi+UyBuP2nm8k\n"
    "6IzXwed1x85Yc8OccllnghK7V2/UGdqDCiKUtQuPU38urzrpWMgsrTuwc7J1KW3W\n"
    "DutqW4idWdD2FIKWDHghpl5MXteeoqKBKvY2OWCoDop2iYNvn37Q+UlzsWC464tz\n"
    "oSWrTs2Bt9ihSYG/p2JDx9xZILiSW61K8VrFiUaB974q0/c/yaf+TYbbKIZTjOoW\n"
    "3H61LKufXJh8jp6rJD4c\n"
    "-----END CERTIFICATE-----\n";
#endif
