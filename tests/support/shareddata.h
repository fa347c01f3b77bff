// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Tests against real data (../shared/traces, ../shared/tools) that is absent from a fresh clone. Where the data is
// absent such a test skips, and CTest reports it as Skipped, not Passed: EXPOSURE_DATA_*_MAIN exits with
// kDataSkippedExitCode (the tests' SKIP_RETURN_CODE, tests/CMakeLists.txt) when every test function passed or
// skipped and at least one skipped for want of data; a failure still fails. With EXPOSURE_REQUIRE_DATA=1 in the
// environment (.ci/run sets it: CI has the data) an absent file fails instead of skipping.
#include <QByteArray>
#include <QString>
#include <QTest>

namespace exposure::testing {

inline constexpr int kDataSkippedExitCode = 77;

inline bool& dataSkipped()
{
    static bool skipped = false;
    return skipped;
}

inline bool dataRequired()
{
    return qgetenv("EXPOSURE_REQUIRE_DATA") == "1";
}

inline int dataExitCode(int qExecResult)
{
    return qExecResult == 0 && dataSkipped() ? kDataSkippedExitCode : qExecResult;
}

} // namespace exposure::testing

// Skips the current test function when `present` is false (fails with EXPOSURE_REQUIRE_DATA=1); `what` names the
// data (a C string).
#define EXPOSURE_REQUIRE_SHARED(present, what)                                                                         \
    do {                                                                                                               \
        if (!(present)) {                                                                                              \
            if (exposure::testing::dataRequired())                                                                     \
                QFAIL(qPrintable(                                                                                      \
                    QStringLiteral("EXPOSURE_REQUIRE_DATA=1 but this data is absent: ") + QString::fromUtf8(what)));   \
            exposure::testing::dataSkipped() = true;                                                                   \
            QSKIP(qPrintable(QString::fromUtf8(what) + QStringLiteral(" is not available here")));                     \
        }                                                                                                              \
    } while (false)

#define EXPOSURE_DATA_MAIN_WRAPPER(TestObject, ...)                                                                    \
    int main(int argc, char* argv[])                                                                                   \
    {                                                                                                                  \
        QT_PREPEND_NAMESPACE(QTest::Internal::callInitMain)<TestObject>();                                             \
        __VA_ARGS__                                                                                                    \
        TestObject tc;                                                                                                 \
        QTEST_SET_MAIN_SOURCE_PATH                                                                                     \
        return exposure::testing::dataExitCode(QTest::qExec(&tc, argc, argv));                                         \
    }

// QTEST_MAIN, QTEST_GUILESS_MAIN and QTEST_APPLESS_MAIN with the exit code above.
#define EXPOSURE_DATA_TEST_MAIN(TestObject) EXPOSURE_DATA_MAIN_WRAPPER(TestObject, QTEST_MAIN_SETUP())
#define EXPOSURE_DATA_GUILESS_MAIN(TestObject)                                                                         \
    EXPOSURE_DATA_MAIN_WRAPPER(TestObject, QTEST_QAPP_SETUP(QCoreApplication))
#define EXPOSURE_DATA_APPLESS_MAIN(TestObject) EXPOSURE_DATA_MAIN_WRAPPER(TestObject)
