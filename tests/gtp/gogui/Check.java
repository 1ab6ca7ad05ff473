import net.sf.gogui.gtp.*;
import net.sf.gogui.go.*;
import java.util.*;

/** Drives engine-gtp with GoGui's own GtpClient and parsers. */
public class Check {
    public static void main(String[] args) throws Exception {
        GtpClient c = new GtpClient(args[0], null, false, null);
        c.send("boardsize 9"); c.send("clear_board"); c.send("play b e5"); c.send("play w c3");
        c.send("goengine-set_param gogui_search_seconds 1");
        String cmds = c.send("gogui-analyze_commands");
        System.out.println("analyze_commands first line: [" + cmds.split("\n")[0] + "]");
        for (String line : cmds.split("\n")) {
            AnalyzeDefinition d = new AnalyzeDefinition(line);
            System.out.println("  " + d.getType() + " / " + d.getLabel() + " / " + d.getCommand());
        }
        String own = c.send("gogui-ownership");
        double[][] b = GtpUtil.parseDoubleBoard(own, 9);
        System.out.println("dboard parsed: rows " + b.length + " first value " + b[0][0] + " e5 " + b[4][4]);
        String sb = c.send("showboard");
        System.out.println("showboard first line: [" + sb.split("\n")[0] + "]");
        String hm = c.send("gogui-visit_heatmap");
        System.out.println("heatmap first token line: [" + hm.split("\n")[0].substring(0, Math.min(60, hm.split("\n")[0].length())) + "]");
        String fs = c.send("final_score");
        System.out.println("final_score: " + fs);
        c.send("quit");
    }
}
