// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/theme.h"

#include <QApplication>
#include <QStyle>
#include <QStyleFactory>
#include <algorithm>
#include <cmath>

namespace exposure {

namespace {

double linear(double channel)
{
    return channel <= 0.04045 ? channel / 12.92 : std::pow((channel + 0.055) / 1.055, 2.4);
}

QColor mix(const QColor& from, const QColor& to, double t)
{
    return QColor::fromRgbF(float(from.redF() + (to.redF() - from.redF()) * t),
        float(from.greenF() + (to.greenF() - from.greenF()) * t),
        float(from.blueF() + (to.blueF() - from.blueF()) * t));
}

} // namespace

double relativeLuminance(const QColor& c)
{
    const QColor rgb = c.toRgb();
    return 0.2126 * linear(rgb.redF()) + 0.7152 * linear(rgb.greenF()) + 0.0722 * linear(rgb.blueF());
}

double contrastRatio(const QColor& a, const QColor& b)
{
    const double la = relativeLuminance(a), lb = relativeLuminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

bool isDark(const QPalette& palette)
{
    return relativeLuminance(palette.color(QPalette::Base)) < 0.18;
}

QPalette darkPalette()
{
    const QColor window(0x2B, 0x2B, 0x2B), base(0x1E, 0x1E, 0x1E), text(0xE6, 0xE6, 0xE6);
    QPalette p;
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0x27, 0x27, 0x27));
    p.setColor(QPalette::ToolTipBase, QColor(0x3A, 0x3A, 0x3A));
    p.setColor(QPalette::ToolTipText, QColor(0xF0, 0xF0, 0xF0));
    p.setColor(QPalette::PlaceholderText, QColor(0xA0, 0xA0, 0xA0));
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, QColor(0x35, 0x35, 0x35));
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, QColor(0xFF, 0x80, 0x80));
    p.setColor(QPalette::Light, QColor(0x4A, 0x4A, 0x4A));
    p.setColor(QPalette::Midlight, QColor(0x3E, 0x3E, 0x3E));
    p.setColor(QPalette::Mid, QColor(0x30, 0x30, 0x30));
    p.setColor(QPalette::Dark, QColor(0x1A, 0x1A, 0x1A));
    p.setColor(QPalette::Shadow, QColor(0x0A, 0x0A, 0x0A));
    p.setColor(QPalette::Highlight, QColor(0x2F, 0x65, 0xB8));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(0x7A, 0xB8, 0xFF));
    p.setColor(QPalette::LinkVisited, QColor(0xC0, 0x9C, 0xFF));
    // Disabled widgets are dimmed, but still legible.
    for (const auto role : { QPalette::WindowText, QPalette::Text, QPalette::ButtonText })
        p.setColor(QPalette::Disabled, role, QColor(0x8C, 0x8C, 0x8C));
    p.setColor(QPalette::Disabled, QPalette::Highlight, QColor(0x45, 0x45, 0x45));
    return p;
}

bool applyTheme(const QString& name)
{
    if (name == QLatin1String("system"))
        return true;
    if (name != QLatin1String("dark") && name != QLatin1String("light"))
        return false;
    if (QStyle* fusion = QStyleFactory::create(QStringLiteral("Fusion")))
        QApplication::setStyle(fusion);
    QApplication::setPalette(name == QLatin1String("dark") ? darkPalette() : QApplication::style()->standardPalette());
    return true;
}

QColor dimmedText(const QPalette& palette)
{
    const QColor text = palette.color(QPalette::Text), base = palette.color(QPalette::Base);
    for (double t = 0.55; t < 1.0; t += 0.05) {
        const QColor c = mix(base, text, t);
        if (contrastRatio(c, base) >= kMinTextContrast)
            return c;
    }
    return text;
}

QColor readableOn(const QColor& colour, const QColor& background)
{
    if (contrastRatio(colour, background) >= kMinTextContrast)
        return colour;
    // Towards white on a dark background, towards black on a light one, in small steps.
    const QColor target = relativeLuminance(background) < 0.18 ? QColor(Qt::white) : QColor(Qt::black);
    for (double t = 0.05; t < 1.0; t += 0.05) {
        const QColor c = mix(colour, target, t);
        if (contrastRatio(c, background) >= kMinTextContrast)
            return c;
    }
    return target;
}

} // namespace exposure
