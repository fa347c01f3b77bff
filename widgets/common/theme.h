// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Colours that must stay readable whatever the palette: WCAG 2 contrast, the application's dark palette, dimmed and
// signal-coloured text that is adjusted to its background.
#include <QColor>
#include <QPalette>
#include <QString>

namespace exposure {

// WCAG 2 relative luminance of an sRGB colour (0 black … 1 white).
double relativeLuminance(const QColor& c);
// WCAG 2 contrast ratio (1 … 21); text needs at least 4.5 (kMinTextContrast).
double contrastRatio(const QColor& a, const QColor& b);
inline constexpr double kMinTextContrast = 4.5;

bool isDark(const QPalette& palette); // its Base is dark
// A dark palette for the Fusion style (`exposure --theme dark`): every text role reads at >= 4.5:1 on the
// backgrounds it is drawn on.
QPalette darkPalette();
// Applies a theme to the running QApplication: "dark" (Fusion style, darkPalette()), "light" (Fusion style, its
// standard palette) or "system" (nothing changes). False for another name.
bool applyTheme(const QString& name);

// Secondary text (labels of the details panel, captions): between Text and Base, at least 4.5:1 on Base.
QColor dimmedText(const QPalette& palette);
// `colour` (a warning red, the exposed orange) made lighter or darker until it reads at >= 4.5:1 on `background`.
QColor readableOn(const QColor& colour, const QColor& background);

} // namespace exposure
