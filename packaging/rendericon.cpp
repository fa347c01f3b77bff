// SPDX-License-Identifier: GPL-3.0-or-later
// exposure-render-icon SVG OUTDIR NAME SIZE...: a build-time tool (never installed) that rasterises the scalable
// application icon with Qt's SVG renderer into the hicolor layout, OUTDIR/<S>x<S>/apps/NAME.png for each size S,
// so the package ships PNG icons for desktops and software centres that do not read SVG.
#include <QDir>
#include <QImage>
#include <QPainter>
#include <QSvgRenderer>
#include <cstdio>
#include <cstdlib>

namespace {

int fail(const QString& message)
{
    std::fprintf(stderr, "exposure-render-icon: %s\n", qPrintable(message));
    return 2;
}

} // namespace

int main(int argc, char** argv)
{
    // Painting shapes into a QImage needs no QGuiApplication (the icon has no text), so no display either.
    QStringList args;
    for (int i = 1; i < argc; ++i)
        args << QString::fromLocal8Bit(argv[i]);
    if (args.size() < 4)
        return fail(QStringLiteral("usage: exposure-render-icon SVG OUTDIR NAME SIZE..."));
    const QString svg = args[0];
    QSvgRenderer renderer(svg);
    if (!renderer.isValid())
        return fail(svg + QStringLiteral(": not a valid SVG file"));
    for (const QString& arg : args.mid(3)) {
        bool ok = false;
        const int size = arg.toInt(&ok);
        if (!ok || size < 1 || size > 4096)
            return fail(QStringLiteral("size '%1' is not a number of pixels from 1 to 4096").arg(arg));
        QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::transparent);
        {
            QPainter painter(&image);
            painter.setRenderHint(QPainter::Antialiasing);
            renderer.render(&painter, QRectF(0, 0, size, size));
        }
        const QString dir = QStringLiteral("%1/%2x%2/apps").arg(args[1]).arg(size);
        const QString file = dir + QLatin1Char('/') + args[2] + QStringLiteral(".png");
        if (!QDir().mkpath(dir) || !image.save(file, "PNG"))
            return fail(file + QStringLiteral(": cannot write the icon"));
    }
    return EXIT_SUCCESS;
}
