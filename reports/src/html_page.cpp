#include "html_page.hpp"

#include <cctype>

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

namespace {

constexpr std::string_view kEnDash = "\xE2\x80\x93";

bool is_word_byte(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == ':' ||
         c == '+' || c == '=';
}

// Where the markup at `at` (a '<') ends: past its '>', or for a script or style element, past its
// end tag, whose text is no prose.
std::size_t markup_end(std::string_view html, std::size_t at) {
  for (const std::string_view raw : {"script", "style"}) {
    if (html.substr(at + 1, raw.size()) == raw) {
      const std::size_t close = html.find(fmt::format("</{}", raw), at);
      if (close != std::string_view::npos) at = close;
      break;
    }
  }
  const std::size_t end = html.find('>', at);
  return end == std::string_view::npos ? html.size() : end + 1;
}

// The end of the run of word bytes, hyphens and en dashes from `at`, and whether it holds a digit
// and a hyphen or dash.
std::size_t token_end(std::string_view html, std::size_t at, bool& digit, bool& dash) {
  while (at < html.size()) {
    if (html[at] == '-') {
      dash = true;
      ++at;
    } else if (html.substr(at, kEnDash.size()) == kEnDash) {
      dash = true;
      at += kEnDash.size();
    } else if (is_word_byte(html[at])) {
      digit = digit || std::isdigit(static_cast<unsigned char>(html[at])) != 0;
      ++at;
    } else {
      break;
    }
  }
  return at;
}

}  // namespace

std::string keep_tokens_whole(std::string_view html) {
  std::string out;
  out.reserve(html.size() + html.size() / 16);
  std::size_t at = 0;
  while (at < html.size()) {
    if (html[at] == '<') {
      const std::size_t end = markup_end(html, at);
      out += html.substr(at, end - at);
      at = end;
      continue;
    }
    bool digit = false, dash = false;
    std::size_t end = token_end(html, at, digit, dash);
    // A sentence's full stop or colon after a number is no part of it.
    while (end > at + 1 && (html[end - 1] == '.' || html[end - 1] == ':')) --end;
    if (end == at) {
      out += html[at++];
      continue;
    }
    const std::string_view token = html.substr(at, end - at);
    const bool option = token.size() > 2 && token.starts_with("--") &&
                        std::isalpha(static_cast<unsigned char>(token[2])) != 0;
    if (option || (digit && dash)) {
      out += fmt::format("<span class=\"nw\">{}</span>", token);
    } else {
      out += token;
    }
    at = end;
  }
  return out;
}

Table::Table(std::initializer_list<std::string_view> headers, std::string_view css)
    : Table(of(std::vector<std::string>(headers.begin(), headers.end()), css)) {}
Table Table::of(const std::vector<std::string>& headers, std::string_view css) {
  Table t;
  t.html = fmt::format("<div class=\"scroll\"><table{}><thead><tr>",
                       css.empty() ? "" : fmt::format(" class=\"{}\"", css));
  for (const std::string& h : headers) t.html += fmt::format("<th>{}</th>", html_escape(h));
  t.html += "</tr></thead><tbody>\n";
  return t;
}
void Table::row(std::initializer_list<std::string> cells) {
  row(std::vector<std::string>(cells));
}
void Table::row(const std::vector<std::string>& cells) {
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
