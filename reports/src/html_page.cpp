#include "html_page.hpp"

#include <fmt/format.h>

#include "report_assets.hpp"

namespace nbody::reports {

std::string script_safe_json(const nlohmann::json& data) {
  std::string out;
  for (const char c : data.dump()) {
    if (c == '<')
      out += "\\u003c";
    else if (c == '>')
      out += "\\u003e";
    else if (c == '&')
      out += "\\u0026";
    else
      out += c;
  }
  return out;
}

std::string script_safe_js(std::string source) {
  for (std::size_t at = 0; (at = source.find("</", at)) != std::string::npos; at += 3) {
    source.replace(at, 2, "<\\/");
  }
  return source;
}

Table::Table(std::initializer_list<std::string_view> headers, std::string_view css) {
  html = fmt::format("<div class=\"scroll\"><table{}><thead><tr>",
                     css.empty() ? "" : fmt::format(" class=\"{}\"", css));
  for (const std::string_view h : headers) html += fmt::format("<th>{}</th>", html_escape(h));
  html += "</tr></thead><tbody>\n";
}
void Table::row(std::initializer_list<std::string> cells) {
  html += "<tr>";
  for (const std::string& c : cells) html += "<td>" + c + "</td>";
  html += "</tr>\n";
}
std::string Table::done() {
  return html + "</tbody></table></div>\n";
}

std::string verdict_badge(RuleVerdict verdict) {
  const char* css = verdict == RuleVerdict::kept          ? "kept"
                    : verdict == RuleVerdict::not_kept    ? "notkept"
                    : verdict == RuleVerdict::cannot_tell ? "unsure"
                                                          : "na";
  return fmt::format("<span class=\"badge {}\">{}</span>", css, html_escape(to_string(verdict)));
}

std::string chart_html(const ChartCard& c) {
  std::string out = fmt::format(
      "<figure class=\"card{}\"><figcaption>{}</figcaption><div class=\"plot\"><canvas "
      "id=\"{}\" data-kind=\"{}\" data-index=\"{}\" role=\"img\" aria-label=\"{}\"></canvas>"
      "</div>",
      c.wide ? " wide" : "", html_escape(c.title), c.id, c.kind, c.index, html_escape(c.title));
  if (!c.note.empty()) out += fmt::format("<p class=\"note\">{}</p>", html_escape(c.note));
  return out + "</figure>\n";
}

std::string charts_section(const std::vector<ChartCard>& charts, const ChartJsSource& chartjs) {
  std::string out = "<section id=\"charts\"><h2>Charts</h2>\n";
  if (chartjs.source) {
    out +=
        "<p class=\"hint\">Hover or tap a point for its exact value.</p>\n<div class=\"grid\">\n";
    std::string absent;
    for (const ChartCard& c : charts) {
      if (c.absent.empty()) {
        out += chart_html(c);
      } else {
        absent += fmt::format("<li><b>{}</b>: no chart, {}.</li>", html_escape(c.title),
                              html_escape(c.absent));
      }
    }
    out += "</div>\n";
    // Charts without data, one line each under the grid, so no card stands empty in it.
    if (!absent.empty()) out += "<ul class=\"absent\">" + absent + "</ul>\n";
  } else {
    out += fmt::format("<p class=\"why\">No charts: {}. The tables below have every figure.</p>\n",
                       html_escape(chartjs.missing_reason));
  }
  return out + "</section>\n";
}

// The assets (reports/assets/) start at their first line; the page keeps a line break after each
// opening tag.
std::string page_head(std::string_view title) {
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>{}</title>\n<script>\n",
      html_escape(title));
  out += kErrorScript;
  out += "</script>\n<style>\n";
  out += kReportCss;
  return out + "</style></head>\n<body><main>\n";
}

std::string page_scripts(const nlohmann::json& data, const ChartJsSource& chartjs) {
  std::string out = "<script type=\"application/json\" id=\"report-data\">" +
                    script_safe_json(data) + "</script>\n";
  if (chartjs.source) out += "<script>" + script_safe_js(*chartjs.source) + "</script>\n";
  out += "<script>\n";
  out += kReportScript;
  return out + "</script>\n";
}

}  // namespace nbody::reports
