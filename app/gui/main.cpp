// SPDX-License-Identifier: GPL-3.0-or-later
// TEMPORARY: replaced by the GUI entry point.
#include <QApplication>
int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    return 0;
}
